export {
  LocalControlPlane,
  ControlPlaneError,
  defaultStateDir,
  mintUser,
  loadClusterCa,
  MAX_RESTARTS,
  RESTART_WINDOW_MS,
  type ControlPlaneOptions,
  type MintedUser,
  type Ports,
} from './control-plane.js';
export { findBinaries, buildBinaries, type Binaries } from './binaries.js';

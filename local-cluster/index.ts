export {
  LocalControlPlane,
  ControlPlaneError,
  defaultStateDir,
  mintUser,
  loadClusterCa,
  type ControlPlaneOptions,
  type MintedUser,
  type Ports,
} from './control-plane.js';
export { findBinaries, buildBinaries, type Binaries } from './binaries.js';

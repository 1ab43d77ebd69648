// What `npm run bench` was asked for (bench/run.ts parses it), and what each phase of one topology
// shares: the control plane, the topology, the watches and the HNC process under test.
import type { KubeClient } from '../kube/client.js';
import type { Controller } from './hnc-process.js';
import type { Plane } from './plane.js';
import type { Tracker } from './tracker.js';
import type { Expected, Source, Topology, TopologyName } from './topology.js';

export interface ScenarioOptions {
  size: number;
  rootObjects: number;
  innerObjects: number;
  moveSize: number;
  maxChain: number;
  /** Propagation trials, each between two floors of its own. */
  trials: number;
  moveTrials: number;
  /** Reviews of the closed-loop saturation run. */
  webhookRequests: number;
  /** Seconds each open-loop load runs. */
  webhookSeconds: number;
  /** HNC starts with webhooks before the load: 2 shows a restart with everything (certificate, configurations) in place. */
  webhookRestarts: number;
  /** Whether a topology gets the webhook phase (--quick runs it for the last topology only). */
  webhooksFor: (topology: TopologyName) => boolean;
  /** Give up on a cold start after this long (the rest of the topology is skipped; the run goes on). */
  coldTimeoutMs: number;
  /** Idle window right after the cold start (0: skip; the window after the warm restart is steadyMs). */
  coldSteadyMs: number;
  /** Idle window before the steady RSS with webhooks on (long enough for V8's memory reducer). */
  webhookSteadyMs: number;
  /** No write at the API server for this long = quiet (must exceed HNC's 1 s status coalescing). */
  quietMs: number;
  /** Offered rates (reviews/s) of the open-loop webhook loads. */
  webhookRates: number[];
  /** Seconds of open-loop load at the highest rate during which one new root Role propagates (0: skip). */
  webhookPropagationSeconds: number;
  /** The same loads against a server that only answers (bench/review-floor.ts). */
  reviewFloor: boolean;
  /** Copies during the webhook load, each with a load of its own; their windows are pooled. */
  webhookPropagationTrials: number;
  webhookConcurrency: number;
  floorWrites: number;
  floorConcurrency: number[];
  setupConcurrency: number;
  steadyMs: number;
  hncQps: number;
  hncWorkers: number;
  hncObjectWorkers: number;
  /** Stop each topology after the cold start, its steady state and the warm restart. */
  coldOnly?: boolean;
  profileDir?: string;
  /** Which manager is measured: ours (default) or HNC's Go manager (bench/hnc-go.ts), through the same phases. */
  controller?: 'hnc-ts' | 'hnc-go';
}

/** One topology on its control plane, as the phases after the cold start see it. */
export interface TopologyRun {
  name: TopologyName;
  opts: ScenarioOptions;
  plane: Plane;
  admin: KubeClient;
  tracker: Tracker;
  topology: Topology;
  sources: Source[];
  /** Every namespace's parent: the topology's, and the other roots HNC manages here. */
  parent: Map<string, string | undefined>;
  /** The converged state with the topology's sources. */
  expected: Expected;
  /** Every descendant of the topology's root. */
  descendants: string[];
  /** The HNC process under test. */
  hnc: Controller;
  /** The control plane's and HNC's process ids (for their CPU). */
  pids(): Record<string, number | undefined>;
}

// The continuous HRQ check: every 2 s, each team's services (in its live namespaces) counted
// against the team's hierarchical quota; a count over the limit is an over-admission.
import type { KubeClient } from '../kube/client.js';
import { serviceCollection, type KubeObject } from './kinds.js';
import type { World } from './world.js';

export interface OverAdmission {
  at: string;
  team: string;
  count: number;
  hard: number;
  services: string[];
}

export class QuotaWatch {
  readonly overAdmissions: OverAdmission[] = [];
  samples = 0;
  private running = true;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly admin: KubeClient,
    private readonly world: World,
  ) {}

  start(): void {
    this.done = (async () => {
      while (this.running) {
        await this.sample().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 2000));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async sample(): Promise<void> {
    const [services, namespaces] = await Promise.all([
      this.admin.get<{ items: KubeObject[] }>(serviceCollection()),
      this.admin.get<{ items: KubeObject[] }>('/api/v1/namespaces'),
    ]);
    const live = new Set(namespaces.items.filter((n) => !n.metadata.deletionTimestamp).map((n) => n.metadata.name));
    this.samples++;
    for (const team of this.world.teams) {
      const mine = services.items.filter((s) => live.has(s.metadata.namespace!) && this.world.teamOf(s.metadata.namespace!) === team);
      if (mine.length > team.servicesHard)
        this.overAdmissions.push({
          at: new Date().toISOString(),
          team: team.name,
          count: mine.length,
          hard: team.servicesHard,
          services: mine.map((s) => `${s.metadata.namespace}/${s.metadata.name}`),
        });
    }
  }
}

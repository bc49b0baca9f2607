import type { ReactiveControllerHost } from 'lit';
import type { BenchJob } from '../jobs/job-spec.ts';
import type { Environment } from '../measure/schema.ts';

export type RoofsCacheMode = 'use' | 'fresh';

/**
 * What the run form offers about the page's roofs cache (roofs-store.ts, loaded on first use):
 * when the roofs it would reuse for the current setup were measured, and the visitor's "measure
 * the roofs again". A roofs-only run always measures (that is what it is for).
 */
export class RoofsOffer {
  /** When the roofs the cache holds for this setup were measured; null when it holds none. */
  measuredAt: string | null = null;
  measureAgain = false;
  private keyShown: string | null = null;

  constructor(private readonly host: ReactiveControllerHost) {}

  /** Look the current setup's roofs up (again only when its key changed or a run stored new ones). */
  async refresh(environment: Environment | null, job: BenchJob | null): Promise<void> {
    if (!environment || !job) return;
    const { pageRoofsKey, storedRoofs } = await import('./roofs-store.ts');
    const key = pageRoofsKey(environment, job);
    if (key === this.keyShown) return;
    this.keyShown = key;
    const found = await storedRoofs(key);
    if (this.keyShown !== key) return;
    this.measuredAt = found?.source.measured_at ?? null;
    this.host.requestUpdate();
  }

  setMeasureAgain(again: boolean): void {
    this.measureAgain = again;
    this.host.requestUpdate();
  }

  /** The cache mode of the next run from the form. */
  modeFor(roofsOnly: boolean): RoofsCacheMode {
    return roofsOnly || this.measureAgain ? 'fresh' : 'use';
  }

  /** A run that used the cache ended: its roofs may be new, and the next run reuses again. */
  ranWithCache(): void {
    this.keyShown = null;
    this.measureAgain = false;
    this.host.requestUpdate();
  }
}

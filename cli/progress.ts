/**
 * The CLI's progress lines. In a log (not a TTY): one line per step, never the same step twice in
 * a row, and a percentage that never goes down (a job's phases report overlapping fractions). On a
 * TTY: one line rewritten in place, with the elapsed time and an estimate of what is left.
 */

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressPrinter {
  (step: string, fraction: number): void;
  /** End the updating line (TTY) before other output; a no-op in a log. */
  clear(): void;
}

export function progressPrinter(stream: ProgressStream, now: () => number = () => performance.now()): ProgressPrinter {
  const start = now();
  let shown = 0;
  let lastStep: string | null = null;
  let lineOpen = false;
  const print = ((step: string, fraction: number) => {
    const f = Number.isFinite(fraction) ? Math.min(1, Math.max(0, fraction)) : 0;
    // Never backwards: a later step never shows less than an earlier one.
    shown = Math.max(shown, Math.floor(f * 100));
    const percent = `[${String(shown).padStart(3)}%]`;
    if (!stream.isTTY) {
      if (step === lastStep) return;
      lastStep = step;
      stream.write(`${percent} ${step}\n`);
      return;
    }
    const elapsed = (now() - start) / 1000;
    const eta = shown >= 5 && shown < 100 ? `, ~${formatSeconds((elapsed * (100 - shown)) / shown)} left` : '';
    const line = `${percent} ${step} (${formatSeconds(elapsed)}${eta})`;
    const width = Math.max(20, (stream.columns ?? 100) - 1);
    stream.write(`\r\x1b[K${line.length > width ? `${line.slice(0, width - 1)}…` : line}`);
    lineOpen = true;
  }) as ProgressPrinter;
  print.clear = () => {
    if (lineOpen) stream.write('\r\x1b[K');
    lineOpen = false;
  };
  return print;
}

function formatSeconds(s: number): string {
  return s < 60 ? `${s.toFixed(0)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

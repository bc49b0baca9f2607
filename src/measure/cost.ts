/**
 * Serving cost and energy from a user-supplied price and power draw (browsers can read neither).
 * Definitions: docs/METRICS.md § Cost and energy.
 */
import { requirePositive } from './stats.ts';

export interface CostInput {
  /** Price of the machine, $/hour. */
  dollarsPerHour: number;
  /** Power draw while serving, W; leave out when unknown. */
  watts?: number;
  /** Output (generated) tokens/s over the run. */
  outputTokensPerS: number;
  /** (Prompt + output) tokens/s over the run. */
  totalTokensPerS: number;
}

export interface CostReport {
  dollarsPer1kOutputTokens: number;
  dollarsPer1kTotalTokens: number;
  /** Joules per output token; absent without `watts`. */
  joulesPerOutputToken?: number;
}

/** Cost per 1k tokens = ($/hour) / (tokens/s · 3600) · 1000, for whichever throughput is passed. */
export function dollarsPer1kTokens(dollarsPerHour: number, tokensPerS: number): number {
  requirePositive({ dollarsPerHour, tokensPerS });
  return (dollarsPerHour / (tokensPerS * 3600)) * 1000;
}

/** Energy per token (J) = watts / tokens/s. */
export function joulesPerToken(watts: number, tokensPerS: number): number {
  requirePositive({ watts, tokensPerS });
  return watts / tokensPerS;
}

/** $/1k output tokens (output throughput), $/1k total tokens (total throughput) and J per output token. */
export function costReport(input: CostInput): CostReport {
  const report: CostReport = {
    dollarsPer1kOutputTokens: dollarsPer1kTokens(input.dollarsPerHour, input.outputTokensPerS),
    dollarsPer1kTotalTokens: dollarsPer1kTokens(input.dollarsPerHour, input.totalTokensPerS),
  };
  if (input.watts !== undefined) report.joulesPerOutputToken = joulesPerToken(input.watts, input.outputTokensPerS);
  return report;
}

/** Short explanations shown beside the charts: plain words, the numbers that matter, no jargon left undefined. */
import { html } from 'lit';

export const prefillDecode = html`<p>
    A request runs in two phases. <strong>Prefill</strong> reads the whole prompt at once: every weight is loaded once and reused for every prompt token, so it
    is a matrix–matrix product and can keep the arithmetic units busy. It ends with the first token, so it sets the <strong>TTFT</strong> (time to first token),
    which grows with the prompt.
  </p>
  <p>
    <strong>Decode</strong> then makes one token per step. Each step must read <em>all</em> the weights (and the KV cache so far) to do only about 2 FLOPs per
    weight, so it sets the <strong>TPOT</strong> (time per output token).
  </p>`;

export const decodeMemoryBound = html`<p>
  Why decode is <strong>memory-bound</strong>: a 4-bit weight is 18 bytes per 32 weights, so a decode step does about 2 / 0.5625 ≈ 3.6 FLOPs per byte it reads —
  far less than a GPU can compute per byte it can fetch (its ridge point, often 50–200). So a step cannot take less than
  <em>bytes per token ÷ memory bandwidth</em>: the dashed floor. As the context grows, each step also reads more KV cache, so the floor rises. Time above the
  floor is overhead: kernel launches, synchronisation, kernels that stream poorly.
</p>`;

export const readingRoofline = html`<p>
  How to read a <strong>roofline</strong>: the x-axis is arithmetic intensity, FLOPs done per byte moved. A kernel can go no higher than the sloped line
  (bandwidth × intensity) or the flat one (the compute peak), whichever is lower; they meet at the <em>ridge point</em>. Left of it a kernel is limited by
  memory, right of it by arithmetic. A dot far below the roof is neither: it is losing time to overhead. Decode sits far left; prefill moves right as the prompt
  gets longer.
</p>`;

export const percentilesGoodput = html`<p>
  <strong>P50</strong> (the median) is the typical request; <strong>P99</strong> is the time 99 requests in 100 beat — the slow tail users notice. In a CDF,
  read across at 0.5 and 0.99; a line that creeps slowly to 1 is a long tail. A P99 from fewer than ~20 samples is essentially the maximum.
  <strong>Goodput</strong> counts only requests that meet every latency target (say TTFT ≤ 500 ms and TPOT ≤ 30 ms) per second: a server can have high
  throughput and low goodput.
</p>`;

export const kernelBreakdownHelp = html`<p>
  The profile run times each kernel on the GPU separately (it perturbs the timing, so it never feeds the numbers above). In prefill the matrix products
  dominate; in decode the matrix–vector products that stream the weights should — if small kernels (norms, rope, element-wise) take a large share, launch
  overhead is the bottleneck.
</p>`;

export const whatIf = html`<p>
  A decode step reads every weight once, however many sequences it serves, plus each sequence’s KV cache. So
  <em>tokens/s ≤ bandwidth ÷ (weight bytes + batch × KV bytes)</em> per sequence, times the batch in total — until the arithmetic (2 FLOPs per weight per
  sequence) reaches the compute roof. Move the sliders to see which limit you hit. Bytes and FLOPs are counted op by op over the model's forward pass, exactly
  as the measured run's roofline counts them.
</p>`;

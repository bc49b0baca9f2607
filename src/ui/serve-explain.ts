/** Short explanations beside the serving charts, for readers new to serving benchmarks. */
import { html } from 'lit';

export const summary = html`<p>
  A <strong>serving benchmark</strong> sends many requests and lets a scheduler run them together, as a chat service does (the numbers use vLLM
  <code>bench serve</code>’s definitions, so they compare with it). <strong>Throughput</strong> counts everything finished per second;
  <strong>goodput</strong> counts only the requests that met every latency target (SLO) — a server that is fast on average but keeps some users waiting has high
  throughput and low goodput. <strong>Attainment</strong> is the share of all requests that were good; a failed request counts as not good.
</p>`;

export const batching = html`<p>
  <strong>What batching trades.</strong> A decode step reads all the weights once whatever the batch, so decoding B sequences together costs little more than
  one: tokens per second for the server climb with B. But every user’s token now waits for the whole batch’s step, and new requests wait for a free slot — so
  each user’s TPOT and TTFT grow. Each point is one batch size; the knee is where more batch stops buying throughput and only adds latency.
</p>`;

export const capacity = html`<p>
  <strong>Capacity</strong> is the highest arrival rate at which at least 90% of requests still meet the SLOs (DistServe’s “goodput per GPU”). Below it,
  requests rarely queue; above it, the queue grows faster than the server drains it and attainment falls off a cliff. The search tries a low and a high rate,
  then halves the gap between the last rate that passed and the first that failed.
</p>`;

export const distributions = html`<p>
  One value per completed request. <strong>TTFT</strong> here includes the time a request waited in the queue — under load that wait, not the prefill, is often
  most of it. <strong>TPOT</strong> is the mean gap between a request’s later tokens. Read across at 0.5 for the median and at 0.99 for the tail that SLOs are
  usually written against.
</p>`;

export const timeline = html`<p>
  Each bar is one request on the run’s clock. <strong>Queued</strong>: it has arrived but every batch slot is busy. <strong>Prefill</strong>: its prompt is
  processed (in chunks that share steps with other requests’ decode when chunked prefill is on). <strong>Decode</strong>: one token per step until its output is
  complete. Long queued bars mean the arrival rate is above what the batch size can serve.
</p>`;

export const batchSizes = html`<p>
  How many sequences each step of the run actually carried (decodes and prefill chunks together). Steps with few sequences read all the weights for little work;
  a run that rarely fills its batch is paying for idle capacity — the batch limit, the arrival rate or the queue limit, not the GPU, set the pace.
</p>`;

export const prefixCache = html`<p>
  Requests that start with tokens another request already processed (a shared system prompt, a conversation's earlier turns) find them in the prefix cache in
  blocks of 16 and skip their prefill: the cached K/V is copied into the request's slot instead. The hit rate is cached prompt tokens ÷ prompt tokens. TTFT
  counts from arrival, so when every request is sent at once the hits — the later requests — also waited longest in the queue; compare the same workload with
  the cache off to see what it saves.
</p>`;

import { css } from 'lit';

/** Styles shared by every element (the page's CSS variables pierce shadow roots). */
export const shared = css`
  :host {
    display: block;
    color: var(--fg);
  }
  .card {
    background: var(--card);
    border: 1px solid var(--border);
    border-radius: 10px;
    padding: 16px 18px;
    margin: 0 0 16px;
  }
  h2 {
    font-size: 1.05rem;
    margin: 0 0 10px;
  }
  .muted {
    color: var(--muted);
  }
  .mono {
    font-family: var(--mono);
    font-size: 0.85rem;
  }
  button {
    font: inherit;
    padding: 8px 16px;
    border-radius: 8px;
    border: 1px solid var(--accent);
    background: var(--accent);
    color: var(--accent-fg);
    cursor: pointer;
  }
  button.secondary {
    background: transparent;
    color: var(--accent);
  }
  button:disabled {
    opacity: 0.5;
    cursor: not-allowed;
  }
  button:focus-visible,
  select:focus-visible,
  input:focus-visible,
  a:focus-visible {
    outline: 3px solid var(--accent);
    outline-offset: 2px;
  }
  table {
    border-collapse: collapse;
    width: 100%;
    font-size: 0.9rem;
  }
  th,
  td {
    text-align: left;
    padding: 4px 8px;
    border-bottom: 1px solid var(--border);
    vertical-align: top;
  }
  td.num,
  th.num {
    text-align: right;
    font-variant-numeric: tabular-nums;
  }
  .banner {
    border-radius: 10px;
    padding: 14px 16px;
    margin: 0 0 16px;
  }
  .banner.error {
    background: var(--error-bg);
    color: var(--error-fg);
  }
  .banner.warn {
    background: var(--warn-bg);
    color: var(--warn-fg);
  }
  .scroll {
    overflow-x: auto;
  }
`;

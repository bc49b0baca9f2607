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
  button.secondary,
  label.button {
    background: transparent;
    color: var(--accent);
  }
  label.button {
    display: inline-block;
    font: inherit;
    font-weight: normal;
    padding: 8px 16px;
    border-radius: 8px;
    border: 1px solid var(--accent);
    cursor: pointer;
  }
  label.button:focus-within {
    outline: 3px solid var(--accent);
    outline-offset: 2px;
  }
  label {
    display: flex;
    flex-direction: column;
    gap: 4px;
    font-weight: 600;
    font-size: 0.9rem;
  }
  select,
  input:not([type='checkbox']):not([type='radio']):not([type='range']) {
    font: inherit;
    font-weight: normal;
    padding: 6px 8px;
    border-radius: 6px;
    border: 1px solid var(--border);
    background: var(--bg);
    color: var(--fg);
    min-width: 0;
    max-width: 100%;
  }
  input[type='range'] {
    accent-color: var(--accent);
  }
  .tag {
    display: inline-block;
    font-size: 0.8rem;
    padding: 1px 8px;
    border-radius: 999px;
    border: 1px solid var(--border);
  }
  .tag.warn {
    background: var(--warn-bg);
    color: var(--warn-fg);
    border-color: transparent;
  }
  h3 {
    font-size: 0.95rem;
    margin: 14px 0 6px;
  }
  button:disabled {
    opacity: 0.5;
    cursor: not-allowed;
  }
  button:focus-visible,
  select:focus-visible,
  input:focus-visible,
  a:focus-visible,
  [tabindex]:focus-visible {
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
  .scroll-hint {
    display: none;
    font-size: 0.8rem;
    color: var(--muted);
    margin: 0 0 4px;
  }
  @media (max-width: 700px) {
    .scroll-hint {
      display: block;
    }
  }
  td.num {
    white-space: nowrap;
  }
  button.small {
    padding: 4px 10px;
    font-size: 0.85rem;
  }
  /* Definitions under a table (not a column in it, which wraps letter by letter on a phone). */
  dl.defs {
    font-size: 0.85rem;
    margin: 10px 0 0;
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: 2px 12px;
  }
  dl.defs dt {
    font-weight: 600;
  }
  dl.defs dd {
    margin: 0;
  }
  @media (max-width: 520px) {
    dl.defs {
      grid-template-columns: 1fr;
    }
    dl.defs dd {
      margin-bottom: 6px;
    }
  }
  summary:focus-visible {
    outline: 3px solid var(--accent);
    outline-offset: 2px;
  }
  .sr-only {
    position: absolute;
    width: 1px;
    height: 1px;
    padding: 0;
    margin: -1px;
    overflow: hidden;
    clip: rect(0, 0, 0, 0);
    white-space: nowrap;
    border: 0;
  }
  .explain {
    font-size: 0.92rem;
    max-width: 75ch;
  }
  .explain p {
    margin: 0 0 8px;
  }
  /* A chart (or table) with its explanation beside it; stacked on narrow screens. */
  .pair {
    display: grid;
    grid-template-columns: minmax(0, 2fr) minmax(0, 1fr);
    gap: 16px;
    align-items: start;
  }
  @media (max-width: 820px) {
    .pair {
      grid-template-columns: minmax(0, 1fr);
    }
  }
  fieldset {
    border: 1px solid var(--border);
    border-radius: 8px;
    margin: 12px 0;
    padding: 8px 12px 10px;
  }
  legend {
    font-weight: 600;
    padding: 0 4px;
  }
  ul.verdicts {
    padding-left: 1.2em;
    font-size: 0.9rem;
  }
`;

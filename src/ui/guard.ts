/**
 * A section of a report that cannot be rendered (a wrong type the validators let through, a zero
 * roof) says so in its place: an exception in a Lit render leaves the element empty with no word
 * to the reader, which is how a whole section used to vanish.
 */
import { html, type TemplateResult } from 'lit';

export function guarded(what: string, render: () => TemplateResult | string): TemplateResult | string {
  try {
    return render();
  } catch (e) {
    return html`<p class="banner error" role="status">The ${what} could not be shown: ${(e as Error).message}</p>`;
  }
}

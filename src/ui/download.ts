/** Saving things the page made (JSON, CSV, PNG) as files, without a server. */

/** Offer `blob` as a download named `filename`. */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has started once click() returns; the URL can go after this task.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

export function downloadText(text: string, filename: string, type: string): void {
  download(new Blob([text], { type }), filename);
}

/** A canvas as PNG on an opaque background (charts draw on a transparent one). */
export function downloadCanvasPng(canvas: HTMLCanvasElement, background: string, filename: string): Promise<void> {
  const out = document.createElement('canvas');
  out.width = canvas.width;
  out.height = canvas.height;
  const ctx = out.getContext('2d')!;
  ctx.fillStyle = background;
  ctx.fillRect(0, 0, out.width, out.height);
  ctx.drawImage(canvas, 0, 0);
  return new Promise((ok, fail) =>
    out.toBlob((blob) => {
      if (!blob) return fail(new Error('The browser could not encode the chart as PNG.'));
      download(blob, filename);
      ok();
    }, 'image/png'),
  );
}

/** A timestamp for file names: 2025-01-31T12-00-00. */
export function fileStamp(iso: string): string {
  return iso
    .replace(/\.\d+Z$/, '')
    .replace(/[:]/g, '-')
    .replace(/[^0-9A-Za-z_-]/g, '-')
    .slice(0, 19);
}

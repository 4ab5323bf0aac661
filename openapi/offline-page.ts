/**
 * `npm run docs`, second step: makes the page Redocly built stand alone. Redoc
 * loads its attribution logo from cdn.redoc.ly, which shows as a broken image
 * offline; it is replaced with an inline SVG. Any other remote asset a later
 * Redoc version adds fails the build here, rather than breaking the page.
 * Usage: tsx openapi/offline-page.ts <page.html>
 */
import { readFileSync, writeFileSync } from 'node:fs';

const REDOCLY_LOGO = /https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g;
const REMOTE_ASSET = /https?:\/\/[^\s"'`()<>]+\.(?:svg|png|jpe?g|gif|webp|ico|css|js|mjs|woff2?|ttf|otf)\b/g;

const logo = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="16" viewBox="0 0 64 16"><text x="0" y="12" font-family="sans-serif" font-size="12" fill="#888">Redocly</text></svg>`;
const inlineLogo = `data:image/svg+xml,${encodeURIComponent(logo)}`;

export function offlinePage(html: string): string {
  const page = html.replace(REDOCLY_LOGO, inlineLogo);
  const remote = [...new Set(page.match(REMOTE_ASSET) ?? [])];
  if (remote.length > 0) throw new Error(`The page still loads remote assets: ${remote.join(', ')}`);
  return page;
}

if (require.main === module) {
  const path = process.argv[2];
  if (!path) throw new Error('Usage: tsx openapi/offline-page.ts <page.html>');
  writeFileSync(path, offlinePage(readFileSync(path, 'utf8')));
}

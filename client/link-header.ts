/**
 * The target of the first link with relation `rel` in a Link header (RFC 8288),
 * e.g. `<https://api.example.com/v1/pets?cursor=…>; rel="next"`.
 */
export function linkTarget(header: string | null, rel: string): string | undefined {
  if (!header) return undefined;
  for (const link of header.split(/,(?=\s*<)/)) {
    const match = /^\s*<([^>]*)>(.*)$/s.exec(link);
    if (!match) continue;
    const relation = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(match[2] ?? '');
    const relations = (relation?.[1] ?? relation?.[2] ?? '').toLowerCase().split(/\s+/);
    if (relations.includes(rel.toLowerCase())) return match[1];
  }
  return undefined;
}

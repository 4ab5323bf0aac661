type Resources = Record<string, { Type?: unknown; DependsOn?: string | string[] }>;

/**
 * The logical ids of a template's resources of `type`, in the order
 * CloudFormation must create them, when each but the first DependsOn
 * (directly) exactly one other of the type and no two depend on the same one:
 * a single chain (lib/constructs/creation-chain.ts). Throws otherwise.
 */
export function creationChain(resources: Resources, type: string): string[] {
  const members = new Set(Object.keys(resources).filter((id) => resources[id]!.Type === type));
  const before = new Map<string, string>();
  for (const id of members) {
    const dependsOn = resources[id]!.DependsOn ?? [];
    const previous = (Array.isArray(dependsOn) ? dependsOn : [dependsOn]).filter((dep) => members.has(dep));
    if (previous.length > 1) throw new Error(`${id} depends on ${previous.length} ${type}`);
    if (previous[0] !== undefined) before.set(id, previous[0]);
  }
  const firsts = [...members].filter((id) => !before.has(id));
  if (firsts.length !== 1) throw new Error(`${type}: ${firsts.length} resources depend on no other one (${firsts.slice(0, 5).join(', ')})`);
  const after = new Map([...before].map(([id, previous]) => [previous, id]));
  if (after.size !== before.size) throw new Error(`${type}: two resources depend on the same one`);
  const chain = [firsts[0]!];
  while (after.has(chain.at(-1)!)) chain.push(after.get(chain.at(-1)!)!);
  if (chain.length !== members.size) throw new Error(`${type}: the chain from ${firsts[0]} holds ${chain.length} of ${members.size}`);
  return chain;
}

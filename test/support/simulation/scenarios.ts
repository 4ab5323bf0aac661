import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Scenario } from './world';

/**
 * Every scenario of workloads/, one file each, found by listing the folder: a
 * new scenario is a new file (it exports `scenario`), registered by no other
 * edit. In name order, so a seed draws the same scenario on every machine.
 */
export function scenarios(): Scenario[] {
  const folder = join(__dirname, 'workloads');
  return readdirSync(folder)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .sort()
    .map((file) => {
      // Found at run time, by listing their folder: a require of each file.
      const loaded = require(join(folder, file)) as { scenario?: Scenario };
      if (!loaded.scenario) throw new Error(`workloads/${file} exports no scenario`);
      return loaded.scenario;
    });
}

/** The scenario a seed's first draw picks, by weight. */
export function drawScenario(all: Scenario[], random: () => number): Scenario {
  const total = all.reduce((sum, scenario) => sum + scenario.weight, 0);
  let draw = random() * total;
  for (const scenario of all) {
    draw -= scenario.weight;
    if (draw < 0) return scenario;
  }
  return all.at(-1)!;
}

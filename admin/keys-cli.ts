/**
 * `npx petstore-keys` (or `npm run keys --`): API key administration for
 * usage-plan administrators. This file is the commander wiring only: the rules
 * live in key-admin.ts, the printing in key-output.ts, and the targets (the
 * local `npm start`, or a deployed stage) in targets/.
 */
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { type PlanName, planNames } from '../definitions/plans';
import { authorizer } from '../definitions/routes';
import { type DeployedStage, deployedStages, stackNames } from '../definitions/stages';
import { type KeyState, keyStates } from '../functions/customers';
import { COUNTER_RETENTION_DAYS } from '../functions/rate-limit';
import { type Clock, systemClock } from '../functions/runtime/clock';
import { AdminError, describeError } from './errors';
import { issueKey, keyUsage, listKeys, parseGrace, planChoice, revokeKey, rotateKey, setPlan, showKey, type Warnings } from './key-admin';
import * as output from './key-output';
import type { AwsClients, ControlPlanePacing, RetryTiming } from './targets/aws';
import { openLocalTarget } from './targets/local';
import type { KeyAdminTarget } from './targets/target';

export interface TargetSelection {
  stage?: DeployedStage;
  region?: string;
  /** Tells the administrator what the tool waits for (a line on standard error). */
  notify?: (line: string) => void;
}

export interface KeysCliContext {
  clock: Clock;
  /** Standard output and standard error, as text (lines end in \n). */
  out(text: string): void;
  err(text: string): void;
  openTarget(selection: TargetSelection): Promise<KeyAdminTarget>;
}

/** Where commands work: the local `npm start` by default, a deployed stage with --stage. */
export function openTargetFor(options: { localEndpointFile?: string; awsClients?: AwsClients; retryTiming?: RetryTiming } = {}) {
  // One process spaces its UpdateUsagePlan calls across every command it runs (admin/targets/aws.ts, ControlPlanePacing).
  const lastSent: ControlPlanePacing['lastSent'] = new Map();
  return async (selection: TargetSelection): Promise<KeyAdminTarget> => {
    if (!selection.stage) return openLocalTarget({ endpointFile: options.localEndpointFile });
    // Loaded only when needed: the local commands stay quick to start.
    const { openAwsTarget } = await import('./targets/aws');
    return openAwsTarget({
      stage: selection.stage,
      region: selection.region,
      clients: options.awsClients,
      retryTiming: options.retryTiming,
      pacing: { lastSent, notify: selection.notify ?? (() => {}) },
    });
  };
}

const defaultContext: KeysCliContext = {
  clock: systemClock,
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  openTarget: openTargetFor(),
};

/** The largest limit an option takes: 12 digits, far past any plan and well within exact integers. */
const LARGEST_LIMIT = 999_999_999_999;

/** A parser of a whole number from 1 to `largest`, whose refusal says both bounds (and why the upper one, if given). */
function wholeNumberUpTo(largest: number, why = '') {
  return (value: string): number => {
    const number = /^[1-9]\d*$/.test(value) ? Number(value) : Number.NaN;
    if (!(number <= largest)) throw new InvalidArgumentError(`must be a whole number from 1 to ${largest.toLocaleString('en-US')}${why}.`);
    return number;
  };
}

interface TargetOptions {
  stage?: DeployedStage;
  region?: string;
}

/** What every command's action uses: output, and the target its options name. */
interface CommandKit {
  print: (text: string) => void;
  printJson: (value: unknown) => void;
  warn: (warnings: Warnings) => void;
  onTarget: <T>(options: TargetOptions, run: (target: KeyAdminTarget, now: number) => Promise<T>) => Promise<T>;
  /** The same, for the commands that change a key: their messages say where they did. */
  onNamedTarget: <T extends object>(
    options: TargetOptions,
    run: (target: KeyAdminTarget, now: number) => Promise<T>,
  ) => Promise<T & { where: string }>;
  command: (name: string, description: string) => Command;
}

export function createKeysProgram(context: KeysCliContext): Command {
  const program = new Command('petstore-keys')
    .description(
      'Issue, list, rotate and revoke Pet Store API keys.\n' +
        'Works on the local API of `npm start` unless --stage names a deployed stage (then with your AWS credentials).',
    )
    .exitOverride()
    .configureOutput({ writeOut: context.out, writeErr: context.err, outputError: (text, write) => write(withoutSecrets(text)) })
    .addHelpText(
      'after',
      `
Secrets are shown once, by issue and rotate; everything else shows the display prefix only.
Revoking a key, the end of a rotated key's grace and a plan change take effect at the key's next
request: every request checks them. The authorizer's ${authorizer.resultsCacheTtlSeconds}-second cache bounds only requests that
never reach a function (those the gateway itself refuses).

Examples:
  $ petstore-keys issue --plan pro --owner "Acme Ltd"
  $ petstore-keys list --plan pro --status active
  $ petstore-keys rotate key_0123456789abcdef --grace 24h --stage production`,
    );
  const kit = commandKit(program, context);
  addIssueAndInspectCommands(kit);
  addChangingCommands(kit);
  addUsageCommand(kit);
  addMeteringCommands(kit);
  for (const cmd of program.commands) addTargetOptions(cmd);
  return program;
}

function commandKit(program: Command, context: KeysCliContext): CommandKit {
  /** Opens the target the options name, runs the command on it, and closes it. */
  async function onTarget<T>(options: TargetOptions, run: (target: KeyAdminTarget, now: number) => Promise<T>): Promise<T> {
    if (options.region && !options.stage) throw new AdminError('--region chooses where a deployed stage is: use it with --stage.');
    const notify = (line: string) => context.err(`${line}\n`);
    const target = await context.openTarget({ stage: options.stage, region: options.region, notify });
    try {
      return await run(target, context.clock());
    } finally {
      target.close();
    }
  }
  return {
    print: (text) => context.out(`${text}\n`),
    printJson: (value) => context.out(`${JSON.stringify(value, null, 2)}\n`),
    warn: (warnings) => {
      for (const warning of warnings) context.err(`warning: ${warning}\n`);
    },
    onTarget,
    onNamedTarget: (options, run) => onTarget(options, async (target, now) => ({ ...(await run(target, now)), where: target.name })),
    command: (name, description) => program.command(name).description(description),
  };
}

/** The options that choose where a command works; added to every command, last in its help. */
function addTargetOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--stage <stage>',
        `work on a deployed stage (stack ${Object.values(stackNames).join(' or ')}) instead of the local npm start`,
      ).choices(deployedStages),
    )
    .option('--region <region>', "AWS region of the stage's stack (default: AWS_REGION or your AWS profile's)");
}

const planOption = (description: string) => new Option('--plan <plan>', description).choices(planNames);
const limitOptions = (cmd: Command) =>
  cmd
    .option('--per-minute <n>', 'requests per minute (enterprise only, required there)', wholeNumberUpTo(LARGEST_LIMIT))
    .option('--per-day <n>', 'requests per day (enterprise only, required there)', wholeNumberUpTo(LARGEST_LIMIT));

/** issue, list and show. */
function addIssueAndInspectCommands({ command, onTarget, onNamedTarget, print, printJson, warn }: CommandKit): void {
  limitOptions(
    command('issue', 'issue a new key and print its secret, once')
      .addOption(planOption('the plan of the key').makeOptionMandatory())
      .requiredOption('--owner <name>', 'the customer the key belongs to'),
  )
    .option('--json', 'print JSON (with the secret) for scripts')
    .action(async (options: TargetOptions & { plan: PlanName; owner: string; perMinute?: number; perDay?: number; json?: boolean }) => {
      const choice = planChoice(options.plan, { perMinute: options.perMinute, perDay: options.perDay });
      const { secret, key, warnings, where } = await onNamedTarget(options, (target, now) =>
        issueKey(target, { ...choice, owner: options.owner }, now),
      );
      if (options.json) printJson(output.newKeyJson(key, secret));
      else print(output.newKeyText(`Issued ${key.keyId} in ${where}.`, key, secret));
      warn(warnings);
    });

  command('list', "list customers' keys as a table (display prefixes only, never secrets; not the deployment check's own key)")
    .addOption(planOption('only keys on this plan'))
    .addOption(new Option('--status <status>', 'only keys with this status (expired: rotated, past the grace)').choices(keyStates))
    .option('--json', 'print JSON for scripts')
    .action(async (options: TargetOptions & { plan?: PlanName; status?: KeyState; json?: boolean }) => {
      const keys = await onTarget(options, (target, now) => listKeys(target, { plan: options.plan, status: options.status }, now));
      if (options.json) printJson(keys);
      else print(output.listText(keys));
    });

  command('show', "show a key: plan, owner, status, created, last used and today's usage")
    .argument('<id>', 'key id (key_…)')
    .option('--json', 'print JSON for scripts')
    .action(async (id: string, options: TargetOptions & { json?: boolean }) => {
      const details = await onTarget(options, (target, now) => showKey(target, id, now));
      if (options.json) printJson(output.showJson(details));
      else print(output.showText(details));
    });
}

/** rotate, revoke and set-plan: each takes effect at the key's next request. */
function addChangingCommands(kit: CommandKit): void {
  const { command, onNamedTarget, print, printJson, warn } = kit;
  command(
    'rotate',
    "issue a new key of the same customer (its plan, limits, usage and metering are the customer's) and let the old key work for a grace period",
  )
    .argument('<id>', 'key id (key_…)')
    .option('--grace <duration>', 'how long the old key keeps working: 0, or e.g. 90s, 30m, 24h, 7d (at most 30d)', '24h')
    .option('--json', 'print JSON (with the secret) for scripts')
    .action(async (id: string, options: TargetOptions & { grace: string; json?: boolean }) => {
      const graceMs = parseGrace(options.grace);
      const result = await onNamedTarget(options, (target, now) => rotateKey(target, id, graceMs, now));
      if (options.json) printJson({ ...output.newKeyJson(result.successor, result.secret), replaces: result.predecessor });
      else print(output.rotatedText(result.predecessor, result.successor, result.secret, result.where));
      warn(result.warnings);
    });

  addRevokeCommand(kit);

  limitOptions(
    command('set-plan', "move a key's customer to another plan (the next request of every key of it gets the new limits)")
      .argument('<id>', 'key id (key_…)')
      .addArgument(new Argument('<plan>', 'the new plan').choices(planNames)),
  ).action(async (id: string, plan: PlanName, options: TargetOptions & { perMinute?: number; perDay?: number }) => {
    const choice = planChoice(plan, { perMinute: options.perMinute, perDay: options.perDay });
    const result = await onNamedTarget(options, (target, now) => setPlan(target, id, choice, now));
    print(output.planChangedText(result.previous, result.key, result.unchanged, result.where));
    if (options.stage && !result.unchanged && [result.previous.plan, result.key.plan].includes('enterprise')) {
      print(output.usagePlanFollowsNote);
    }
    if (options.stage && result.previous.plan === 'enterprise' && result.key.plan !== 'enterprise') {
      const cached = new Date(Date.parse(result.key.updatedAt) + authorizer.resultsCacheTtlSeconds * 1000).toISOString();
      print(releaseNote(options.stage, `the authorizer's cached answers have expired (${cached})`));
    }
    warn(result.warnings);
  });
}

function addRevokeCommand({ command, onNamedTarget, print, warn }: CommandKit): void {
  command('revoke', 'revoke a key for good (its next request is refused)')
    .argument('<id>', 'key id (key_…)')
    .option(
      '--retire-check-key',
      'revoke a key of the pre-traffic deployment check whose secret was replaced (the check re-creates the key of its current secret)',
    )
    .action(async (id: string, options: TargetOptions & { retireCheckKey?: boolean }) => {
      const result = await onNamedTarget(options, (target, now) => revokeKey(target, id, now, { retiredCheckKey: options.retireCheckKey }));
      print(output.revokedText(result.key, result.alreadyRevoked, result.where));
      warn(result.warnings);
    });
}

/** The follow-up of a change that leaves an Enterprise key's own API key metered for now (admin/targets/aws.ts, release). */
function releaseNote(stage: DeployedStage, when: string): string {
  return `Its own API key and usage plan stay until ${when}: then run \`petstore-keys release-metering --stage ${stage}\` (or let its schedule do it).`;
}

/** usage: requests answered per day to the key's customer, from its counters. */
function addUsageCommand({ command, onTarget, print, printJson }: CommandKit): void {
  command('usage', "requests answered per UTC day to the key's customer (all its keys), from the rate-limit counters")
    .argument('<id>', 'key id (key_…)')
    .option(
      '--days <n>',
      `how many UTC days, today included (at most ${COUNTER_RETENTION_DAYS})`,
      wholeNumberUpTo(COUNTER_RETENTION_DAYS, ` (counters are kept ${COUNTER_RETENTION_DAYS} days)`),
      7,
    )
    .option('--json', 'print JSON for scripts')
    .action(async (id: string, options: TargetOptions & { days: number; json?: boolean }) => {
      const { key, days, total } = await onTarget(options, (target, now) => keyUsage(target, id, options.days, now));
      if (options.json) printJson(output.usageJson(key, days, total));
      else print(output.usageText(key, days, total));
    });
}

function addMeteringCommands(kit: CommandKit): void {
  addReleaseMeteringCommand(kit);
}

/**
 * release-metering: the second step of the changes that must not withdraw an
 * API key the authorizer's cached answers may still name (admin/targets/aws.ts,
 * release): run it after a move off Enterprise, and regularly (e.g. hourly) for
 * rotated Enterprise keys past their grace.
 */
function addReleaseMeteringCommand({ command, onNamedTarget, print }: CommandKit): void {
  command(
    'release-metering',
    `release the API Gateway API keys and usage plans no working key needs any more, once no cached authorizer answer (${authorizer.resultsCacheTtlSeconds} s) can name them (repeatable)`,
  ).action(async (options: TargetOptions) => {
    const result = await onNamedTarget(options, async (target, now) =>
      target.metering.release(await target.keys.scanCustomers(), now, (line) => print(line)),
    );
    const last = result.waiting
      .map((entry) => entry.releasableAt)
      .sort()
      .at(-1);
    print(
      `${result.where}: ${result.released} API key(s) released; ${result.waiting.length} still named by cached authorizer answers` +
        (last ? `: run again after ${last}.` : '.'),
    );
  });
}

/**
 * Runs one command line (the arguments after the program name) and returns
 * the exit code. Every failure is one line on standard error, never a stack.
 */
export async function runKeysCli(argv: string[], context: Partial<KeysCliContext> = {}): Promise<number> {
  const full: KeysCliContext = { ...defaultContext, ...context };
  try {
    await createKeysProgram(full).parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    // Commander has printed its own message (or the help) already.
    if (error instanceof CommanderError) return error.exitCode;
    full.err(`error: ${describeError(error)}\n`);
    return 1;
  }
}

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  process.exitCode = await runKeysCli(argv);
}

/**
 * Commander's own errors quote the argument they refuse: a secret pasted
 * where it reads an option (a fragment of a secret may start with `-`) would
 * reach scrollback and CI logs whole. Any run long enough to be part of a
 * secret (16 characters or more, of both cases) is cut to its first 8, as
 * the display prefix shows them.
 */
function withoutSecrets(text: string): string {
  // Mixed case tells a random run from the tool's own words (`command-argument`).
  return text.replace(/[A-Za-z0-9_-]{16,}/g, (run) => (/[a-z]/.test(run) && /[A-Z]/.test(run) ? `${run.slice(0, 8)}…` : run));
}

// The optional `context` of POST /explain-supersafe/: the two route summaries a client already has and
// what SuperSafe avoided, validated strictly (a malformed value answers 400 naming the field), and
// turned into the same comparison facts the server computes itself without context.
import { z } from 'zod';
import { betterLit, type Comparison, type KeyDifference, lessClimb, minutesLonger } from './facts.js';

export const MAX_AVOIDED = 12;

const meters = z.number().finite().min(0, 'must be a number ≥ 0');
const name = z.string().trim().min(1, 'must be a non-empty string or null').max(200).nullable();

const summary = z
  .object({
    label: z.string().max(200),
    meters,
    seconds: meters,
    climb_meters: meters,
    descent_meters: meters,
    character_meters: z
      .object({ cycleway: meters, quiet: meters, shared: meters, moderate: meters, busy: meters })
      .strict(),
    lit_share: z.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]').nullable(),
  })
  .strict();

const severity = z.enum(['closed', 'avoid']);
const attribution = z.string().max(200).nullable().optional();
const schedule = z.string().trim().min(1).max(200);

const avoided = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('busy_street'), name, meters }).strict(),
  z.object({ kind: z.literal('restricted_turn'), name, onto: name }).strict(),
  z.object({ kind: z.literal('roadworks'), name, schedule, attribution, severity }).strict(),
  z.object({ kind: z.literal('closure_window'), name, schedule, attribution, severity }).strict(),
  z.object({ kind: z.literal('rider_report'), name, attribution, severity }).strict(),
]);

export const contextSchema = z
  .object({
    safe: summary,
    direct: summary.nullable(),
    avoided: z.array(avoided).max(MAX_AVOIDED, `at most ${MAX_AVOIDED} items`),
  })
  .strict();
export type ExplainContext = z.infer<typeof contextSchema>;
type Avoided = ExplainContext['avoided'][number];

/** A validated context, or the 400 message naming the first bad field (`context.avoided.2.kind: …`). */
export function parseContext(value: unknown): { context: ExplainContext } | { error: string } {
  const r = contextSchema.safeParse(value);
  if (r.success) return { context: r.data };
  const issue = r.error.issues[0];
  const where = ['context', ...(issue?.path ?? []).map(String)].join('.');
  const message =
    issue?.code === 'invalid_union' || issue?.message.includes('discriminator')
      ? 'must be one of busy_street, restricted_turn, roadworks, closure_window, rider_report'
      : issue?.code === 'unrecognized_keys'
        ? `unknown field ${(issue.keys as string[]).join(', ')}`
        : (issue?.message ?? 'invalid value');
  const field = issue?.code === 'invalid_union' && !where.endsWith('.kind') ? `${where}.kind` : where;
  return { error: `${field}: ${message}` };
}

/** A schedule said as it came, unless it reads like a distance or a percentage (never said). */
const sayable = (s: string) =>
  s.length <= 60 && !/%|\d\s*(m|km|mi|ft|metres?|meters?|miles?|feet|yards?)\b/i.test(s) ? s : null;

const isWindow = (a: Avoided): a is Extract<Avoided, { kind: 'roadworks' | 'closure_window' }> =>
  a.kind === 'roadworks' || a.kind === 'closure_window';

/**
 * The comparison a context describes (null when nothing in it can be said). Only one street is
 * ever named, the key item's: the context says which streets were avoided but not which the
 * SuperSafe route takes.
 */
export function compareContext(
  ctx: ExplainContext & { direct: NonNullable<ExplainContext['direct']> },
  night: boolean,
): { comparison: Comparison; mostlyQuiet: boolean } | null {
  const { safe, direct, avoided } = ctx;
  const windows = avoided.filter(isWindow);
  windows.sort((a, b) => Number(b.severity === 'closed') - Number(a.severity === 'closed'));
  const busy = avoided.filter((a) => a.kind === 'busy_street');
  busy.sort((a, b) => b.meters - a.meters);
  const turns = avoided.filter((a) => a.kind === 'restricted_turn');
  const reports = avoided.filter((a) => a.kind === 'rider_report');
  let key: KeyDifference | null = null;
  const w = windows[0];
  const b = busy.find((x) => x.name !== null);
  if (w) {
    key = {
      kind: 'disruption',
      works: w.kind,
      severity: w.severity,
      street: w.name ? { name: w.name, side: 'direct' } : null,
      schedule: sayable(w.schedule),
    };
  } else if (b?.name) {
    key = { kind: 'busy_street', street: { name: b.name, side: 'direct' } };
  } else if (reports[0]) {
    key = {
      kind: 'rider_report',
      street: reports[0].name ? { name: reports[0].name, side: 'direct' } : null,
    };
  } else if (turns[0]) {
    key = { kind: 'restricted_turn', street: turns[0].name ? { name: turns[0].name, side: 'direct' } : null };
  } else {
    const quiet = (s: typeof safe) => s.character_meters.cycleway + s.character_meters.quiet;
    if (quiet(safe) >= quiet(direct) + 100) key = { kind: 'quieter' };
    else if (safe.character_meters.busy + 30 <= direct.character_meters.busy) key = { kind: 'less_busy' };
  }
  if (!key) return null;
  const keyItem =
    key.kind === 'disruption'
      ? w
      : key.kind === 'busy_street'
        ? b
        : key.kind === 'rider_report'
          ? reports[0]
          : key.kind === 'restricted_turn'
            ? turns[0]
            : undefined;
  const rest = (xs: Avoided[]) => xs.filter((x) => x !== keyItem).length;
  const quietShare =
    safe.meters > 0 ? (safe.character_meters.cycleway + safe.character_meters.quiet) / safe.meters : 0;
  return {
    comparison: {
      key,
      via: null,
      minutesLonger: minutesLonger(safe, direct),
      betterLit: betterLit(night, safe, direct),
      lessClimb: lessClimb(safe, direct),
      others: { busyStreets: rest(busy), turns: rest(turns), reports: rest(reports), works: rest(windows) },
    },
    mostlyQuiet: quietShare > 0.5,
  };
}

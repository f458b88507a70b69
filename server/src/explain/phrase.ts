// The wording of an explanation: varied phrasings of the facts a comparison holds (facts.ts), put
// together under the spec's content rules. Every clause states one fact the comparison asserts,
// names only the street that fact carries, and on the side it carries it: the text cannot say
// more than the facts. The rules the clauses cannot carry alone are kept by the assembly:
// - the first sentence opens with the key difference (a disruption, else the busiest street avoided);
// - at most one street per side (the key names the direct side, `via` the safe side, no other
//   clause names a street);
// - time only as whole minutes when SuperSafe is at least a minute longer; no clause speaks of
//   equal times, percentages or distances;
// - lighting only on night comparisons (`betterLit` is false by day);
// - one sentence of at most 120 characters without a trailing period, or (context) two to three
//   sentences of at most 320.
import type { Comparison, KeyDifference } from './facts.js';

export const IDENTICAL_SENTENCE = 'The most direct route as well as the quietest';
export const MAX_SINGLE = 120;
export const MAX_CONTEXT = 320;

export type Rng = () => number;

const pick = <T>(xs: readonly T[], rng: Rng): T => xs[Math.floor(rng() * xs.length) % xs.length] as T;

const SUBJECTS = ['SuperSafe', 'The SuperSafe route'] as const;

const plural = (n: number, one: string, many: string) => (n === 1 ? `1 ${one}` : `${n} ${many}`);

/** The key difference as clauses with the subject in front. */
function keyClauses(key: KeyDifference, s: string, withSchedule: boolean): string[] {
  switch (key.kind) {
    case 'disruption': {
      const what =
        key.works === 'roadworks' ? 'roadworks' : key.severity === 'closed' ? 'closure' : 'disruption';
      const when = withSchedule && key.schedule ? ` (${key.schedule})` : '';
      if (key.street) {
        const on = `the ${what} on ${key.street.name}${when}`;
        return [`${s} keeps clear of ${on}`, `${s} steers around ${on}`, `${s} avoids ${on}`];
      }
      const a =
        key.works === 'roadworks'
          ? 'roadworks'
          : key.severity === 'closed'
            ? 'a road closure'
            : 'a disruption';
      // The disruption leads, so a clause after the key reads as SuperSafe's way round it.
      const them = key.works === 'roadworks' ? 'them' : 'it';
      const mid = s.replace(/^The /, 'the ');
      const cap = a.charAt(0).toUpperCase() + a.slice(1);
      return [
        `With ${a} in force when you leave${when}, ${mid} keeps clear of ${them}`,
        `With ${a} in force at your departure time${when}, ${mid} steers around ${them}`,
        `${cap} ${key.works === 'roadworks' ? 'are' : 'is'} in force when you leave${when}: ${mid} keeps clear of ${them}`,
      ];
    }
    case 'busy_street': {
      const x = key.street.name;
      return [
        `${s} avoids busy ${x}`,
        `${s} keeps you off busy ${x}`,
        `${s} skips the traffic on ${x}`,
        `${s} stays clear of the traffic on ${x}`,
      ];
    }
    case 'rider_report':
      return key.street
        ? [
            `${s} avoids ${key.street.name}, which a rider reported`,
            `${s} keeps off ${key.street.name} after a rider's report`,
          ]
        : [
            `${s} steers around a stretch a rider reported`,
            `${s} acts on a rider's report and takes another way`,
          ];
    case 'restricted_turn':
      return key.street
        ? [
            `${s} avoids a restricted turn off ${key.street.name}`,
            `${s} keeps clear of a restricted turn off ${key.street.name}`,
          ]
        : [`${s} avoids a restricted turn on the direct route`];
    case 'takes':
      return [
        `${s} follows ${key.street.name}`,
        `${s} takes ${key.street.name}`,
        `${s} follows ${key.street.name} instead`,
      ];
    case 'quieter':
      return [
        `${s} keeps more of the ride on quiet streets and cycle tracks`,
        `${s} spends more of the way on quiet streets and cycle tracks`,
      ];
    case 'less_busy':
      return [`${s} spends less of the ride on busy roads`, `${s} rides less of the way on busy roads`];
  }
}

/** An optional clause of the single sentence: its phrasings and where it goes in the sentence. */
interface Extra {
  phrasings: string[];
  /** Position in the sentence (the street taken right after the key, lighting, time, climb). */
  order: number;
}

/** Optional clauses, most important first (the first kept when the sentence must be short). */
function extras(c: Comparison): Extra[] {
  const out: Extra[] = [];
  if (c.betterLit) {
    out.push({
      order: 1,
      phrasings: [', on better-lit streets', ', with more of the ride lit', ', along better-lit streets'],
    });
  }
  if (c.via) {
    const y = c.via.name;
    out.push({
      order: 0,
      phrasings: [`, taking ${y} instead`, ` by way of ${y}`, `, following ${y} instead`, ` via ${y}`],
    });
  }
  if (c.minutesLonger >= 1) {
    const n = c.minutesLonger;
    out.push({
      order: 2,
      phrasings: [
        `, for ${plural(n, 'extra minute', 'extra minutes')}`,
        `, at the cost of ${plural(n, 'more minute', 'more minutes')}`,
        `, adding ${plural(n, 'minute', 'minutes')} to the ride`,
      ],
    });
  }
  if (c.lessClimb) out.push({ order: 3, phrasings: [', with less climbing', ' and with less climbing'] });
  return out;
}

/** One sentence of at most 120 characters, no trailing period; null when even the key alone is too long. */
export function singleSentence(c: Comparison, rng: Rng = Math.random): string | null {
  const optional = extras(c);
  for (let keep = optional.length; keep >= 0; keep--) {
    const kept = optional.slice(0, keep).sort((a, b) => a.order - b.order);
    for (let attempt = 0; attempt < 8; attempt++) {
      const text =
        pick(keyClauses(c.key, pick(SUBJECTS, rng), false), rng) +
        kept.map((e) => pick(e.phrasings, rng)).join('');
      if (text.length <= MAX_SINGLE) return text;
    }
  }
  // The shortest wording of the key alone.
  const shortest = keyClauses(c.key, 'SuperSafe', false).sort((a, b) => a.length - b.length)[0] ?? '';
  return shortest.length <= MAX_SINGLE ? shortest : null;
}

const WORDS = [
  'no',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
];
const word = (n: number) => WORDS[n] ?? 'several';

/** Two or three sentences of at most 320 characters (context): the key, then time and character, then the rest avoided. */
export function contextSentences(c: Comparison, mostlyQuiet: boolean, rng: Rng = Math.random): string | null {
  const firsts = keyClauses(c.key, pick(SUBJECTS, rng), true).map((k) => `${k}.`);
  // The second sentence: what the ride costs and gains, else its character.
  const parts: string[] = [];
  if (c.minutesLonger >= 1) {
    parts.push(
      pick(
        [
          `takes ${plural(c.minutesLonger, 'minute', 'minutes')} longer`,
          `adds ${plural(c.minutesLonger, 'minute', 'minutes')} to the ride`,
        ],
        rng,
      ),
    );
  }
  if (c.betterLit) parts.push(pick(['keeps to better-lit streets', 'has more of the ride lit'], rng));
  if (c.lessClimb) parts.push(pick(['climbs less', 'has less climbing'], rng));
  const seconds: string[] = [];
  if (parts.length > 0) {
    const joined = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
    seconds.push(`It ${joined}.`);
  } else if (mostlyQuiet && c.key.kind !== 'quieter') {
    seconds.push(
      'Most of it runs on quiet streets and cycle tracks.',
      'Most of the way is on quiet streets and cycle tracks.',
    );
  } else {
    seconds.push('It is the route SuperSafe rates safest for this trip.');
  }
  // The third: everything else avoided, counted in words, never named.
  const o = c.others;
  const items: string[] = [];
  if (o.works > 0) items.push(o.works === 1 ? 'another disruption' : `${word(o.works)} other disruptions`);
  if (o.busyStreets > 0)
    items.push(o.busyStreets === 1 ? 'another busy street' : `${word(o.busyStreets)} other busy streets`);
  if (o.turns > 0) items.push(o.turns === 1 ? 'a restricted turn' : `${word(o.turns)} restricted turns`);
  if (o.reports > 0)
    items.push(o.reports === 1 ? 'a spot a rider reported' : `${word(o.reports)} spots riders reported`);
  const third =
    items.length === 0
      ? ''
      : ` It also avoids ${items.length === 1 ? items[0] : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`}.`;
  for (let attempt = 0; attempt < 8; attempt++) {
    const text = `${pick(firsts, rng)} ${pick(seconds, rng)}${third}`;
    if (text.length <= MAX_CONTEXT) return text;
  }
  const shortest = `${[...firsts].sort((a, b) => a.length - b.length)[0]} ${seconds[0]}`;
  return shortest.length <= MAX_CONTEXT ? shortest : null;
}

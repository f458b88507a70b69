// POST /explain-supersafe/ as a service: plans SuperSafe and Direct (the night pair on night
// comparisons) with the avoidances in force at the departure, reduces them to facts (facts.ts) with
// the disruptions and accepted rider reports that apply, and words the difference (phrase.ts); or,
// with a client's context, words what the context says. Generated here, by no external model.
import type { Repositories } from '../db/repositories.js';
import { HttpError } from '../errors.js';
import type { LoadedCity } from '../plugins/engine.js';
import { changeSchema } from '../reports/changes.js';
import { minutesOf } from '../routing/directions.js';
import { checkSnapRadius, noRouteWaypoints, type SnapRule } from '../routing/snapping.js';
import { type Departure, localDate, localMinutes } from '../routing/time.js';
import { compareContext, type ExplainContext } from './context.js';
import { compareRoutes, type InForce } from './facts.js';
import { contextSentences, IDENTICAL_SENTENCE, type Rng, singleSentence } from './phrase.js';
import { routeFacts, sameRoads } from './summary.js';

export interface ExplainResponse {
  summary: string | null;
  identical: boolean;
  /** Present (and true) only when a route could not be computed. */
  no_route?: true;
}

export interface ExplainInput {
  city: LoadedCity;
  origin: [number, number];
  destination: [number, number];
  departure: Departure;
  /** A night comparison (only where the city has lighting data). */
  night: boolean;
  context?: ExplainContext;
  rng?: Rng;
  /** The snap radius (routing/snapping.ts): a waypoint off the data has no route, as in directions. */
  snapRule?: SnapRule;
}

const IDENTICAL: ExplainResponse = { summary: IDENTICAL_SENTENCE, identical: true };

/** Disruptions active at the departure and accepted rider reports' way changes, as avoidances. */
export function avoidancesInForce(repos: Repositories, cityId: string, departure: Departure): InForce[] {
  const now = localMinutes(departure);
  const out: InForce[] = [];
  for (const d of repos.disruptions.current(cityId, localDate(departure, -1))) {
    const start = minutesOf(d.startDate, d.startMinute);
    const end = minutesOf(d.endDate, d.endMinute);
    if (!(start <= now && now < end)) continue;
    out.push({
      kind: d.source === 'wzdx' ? 'roadworks' : 'closure_window',
      severity: d.severity,
      name: d.name.trim(),
      wayIds: d.wayIds,
      location: d.location,
    });
  }
  for (const ch of repos.reports.changes({ city: cityId, status: 'active' })) {
    if (ch.reportId === null) continue;
    const spec = changeSchema.safeParse(ch.spec);
    if (!spec.success) continue;
    const s = spec.data;
    // Way changes that make a road worse or shut it; windows reach routing as disruptions above.
    if (s.kind === 'close_way' || (s.kind === 'reweight_way' && s.factor > 1)) {
      out.push({
        kind: 'rider_report',
        severity: s.kind === 'close_way' ? 'closed' : 'avoid',
        name: '',
        wayIds: s.way_ids,
        location: null,
      });
    }
  }
  return out;
}

export async function explain(repos: Repositories, input: ExplainInput): Promise<ExplainResponse> {
  const { city, night, context, rng } = input;
  if (context) {
    if (context.direct === null) return IDENTICAL;
    const c = compareContext({ ...context, direct: context.direct }, night);
    return { summary: c ? contextSentences(c.comparison, c.mostlyQuiet, rng) : null, identical: false };
  }
  const base = {
    coordinates: [input.origin, input.destination],
    profile: 'cycling',
    night,
    departureLocalMinutes: localMinutes(input.departure),
    arcDetails: true,
  };
  let safe: Awaited<ReturnType<typeof city.engine.route>>;
  let direct: typeof safe;
  try {
    [safe, direct] = await Promise.all([
      city.engine.route({ ...base, supersafe: true }),
      city.engine.route({ ...base, supersafe: false }),
    ]);
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  if (!safe || !direct) return { summary: null, identical: false, no_route: true };
  const { snapRule } = input;
  if (snapRule && !checkSnapRadius(snapRule.snapRadiusM, base.coordinates, safe.waypoints).within) {
    noRouteWaypoints(snapRule, city, base.coordinates, safe.waypoints);
    return { summary: null, identical: false, no_route: true };
  }
  const label = night ? ['SuperSafe™ Night', 'Direct · Night'] : ['SuperSafe™', 'Direct'];
  const s = routeFacts(safe, label[0] as string, night);
  const d = routeFacts(direct, label[1] as string, night);
  if (sameRoads(s, d)) return IDENTICAL;
  const c = compareRoutes(s, d, night, avoidancesInForce(repos, city.id, input.departure));
  return { summary: c ? singleSentence(c, rng) : null, identical: false };
}

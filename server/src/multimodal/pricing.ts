// A bike-share option's `rental`: the plan that applies to the vehicle, its prices in the spec's shape,
// and what this trip costs under it (GBFS per-minute and per-kilometre segments), plus app links.
import type { GbfsSystem } from '../gbfs/client.js';
import type { PricingPlan, PricingSegment, RentalUris } from '../gbfs/feeds.js';

export interface ApiPricing {
  currency: string;
  unlock_fee: number;
  per_min_rate: number | null;
  per_min_interval: number | null;
  per_km_rate: number | null;
  per_km_interval: number | null;
  description: string;
  /** Not in the spec's list (additive): this trip's price under the plan, in `currency`. */
  estimated_cost: number;
}

export interface ApiRental {
  pricing: ApiPricing | null;
  app_links: { android: string | null; ios: string | null; logo: string | null };
}

/**
 * The plan for a vehicle: its type's default plan when published, else the single-ride plan whose
 * name says e-bike (electric) or bike (classic), else the first plan.
 */
export function planFor(plans: PricingPlan[], electric: boolean, planId: string | null): PricingPlan | null {
  if (plans.length === 0) return null;
  if (planId) {
    const p = plans.find((x) => x.id === planId);
    if (p) return p;
  }
  const label = (p: PricingPlan) => `${p.id} ${p.name}`.toLowerCase();
  const ebike = /e-?bike|electric/;
  const pick = electric
    ? plans.find((p) => ebike.test(label(p)))
    : plans.find((p) => /bike/.test(label(p)) && !ebike.test(label(p)) && !/scooter/.test(label(p)));
  return pick ?? plans[0] ?? null;
}

/**
 * What segments charge for `amount` units (minutes or km): each segment charges `rate` for every
 * started `interval` after its `start`, up to its `end`.
 */
export function segmentCost(segments: PricingSegment[], amount: number): number {
  let total = 0;
  for (const s of segments) {
    const upto = s.end === null ? amount : Math.min(amount, s.end);
    if (upto <= s.start) continue;
    total += s.rate * Math.ceil((upto - s.start) / (s.interval > 0 ? s.interval : 1) - 1e-9);
  }
  return total;
}

export function rental(
  system: GbfsSystem,
  ride: { electric: boolean; planId: string | null; seconds: number; meters: number },
  uris: RentalUris | null,
): ApiRental {
  const plan = planFor(system.pricingPlans, ride.electric, ride.planId);
  const links = system.appLinks;
  return {
    pricing: plan
      ? {
          currency: plan.currency,
          unlock_fee: plan.price,
          per_min_rate: plan.perMin[0]?.rate ?? null,
          per_min_interval: plan.perMin[0]?.interval ?? null,
          per_km_rate: plan.perKm[0]?.rate ?? null,
          per_km_interval: plan.perKm[0]?.interval ?? null,
          description: plan.description,
          estimated_cost:
            Math.round(
              (plan.price +
                segmentCost(plan.perMin, ride.seconds / 60) +
                segmentCost(plan.perKm, ride.meters / 1000)) *
                100,
            ) / 100,
        }
      : null,
    // Store links from system_information; without them, the station's or vehicle's deep links.
    app_links: {
      android: links.android ?? uris?.android ?? null,
      ios: links.ios ?? uris?.ios ?? null,
      logo: links.logo,
    },
  };
}

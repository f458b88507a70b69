// Recorded rides take their weather fields from the weather service: the conditions at the ride's
// start (the first point of its polyline), fetched in the background after the ride is stored so
// recording never waits on a third party. A failure leaves the fields empty and is logged.
import type { FastifyBaseLogger } from 'fastify';
import type { PlatformRepository, RideRecord } from '../db/platform.js';
import { decodePolyline } from '../routing/polyline.js';
import { type WeatherService, weatherDisplay } from './service.js';

export class RideWeather {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly weather: WeatherService,
    private readonly platform: PlatformRepository,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** Starts fetching a ride's weather; returns at once. */
  fetchFor(ride: RideRecord): void {
    const start = startOf(ride.polyline);
    if (!start) return;
    const job = this.weather
      .current(start[1], start[0])
      .then((view) => {
        this.platform.setRideWeather(ride.id, {
          conditions: view.conditions,
          temperature: view.temperature,
          windSpeed: view.wind_speed,
          fetchedAt: new Date().toISOString(),
          display: weatherDisplay(view),
        });
      })
      .catch((err) => this.log.warn({ err, ride: ride.id }, 'ride weather not fetched'))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /** Waits for the fetches under way (at shutdown, before the database closes). */
  async drain(): Promise<void> {
    await Promise.all([...this.pending]);
  }
}

/** The first point of an encoded polyline as [lon, lat], or null when there is none. */
function startOf(polyline: string): [number, number] | null {
  if (!polyline) return null;
  const first = decodePolyline(polyline.slice(0, 40))[0];
  if (!first) return null;
  const [lon, lat] = first as [number, number];
  if (!Number.isFinite(lon) || !Number.isFinite(lat) || Math.abs(lat) > 90 || Math.abs(lon) > 180)
    return null;
  return [lon, lat];
}

// The rider's own profile, photo, ride history and statistics, and the user search. User sessions
// only: OAuth tokens answer 401 on profile and rides (the spec documents the refusal) and 403 on
// the user search (the rest of the platform).
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Credential } from '../../auth/access.js';
import type { ProfileUpdate, RideRecord } from '../../db/platform.js';
import type { User } from '../../db/repositories.js';
import { HttpBodyError, HttpError } from '../../errors.js';
import { receiveImages, type StoredImage } from '../../storage/uploads.js';
import { viewEvent } from '../events/view.js';

const profileAccess = {
  access: { allow: ['user' as const], oauth: 'reject' as const },
  rateClass: 'profile' as const,
};

export const viewProfile = (u: User, admin = true) => ({
  identity_user_id: u.identityUserId,
  ...(admin ? { email: u.email } : {}),
  name: u.name,
  image_url: u.imageUrl,
  ...(admin
    ? {
        home_address: u.homeAddress,
        home_coords: u.homeCoords,
        work_address: u.workAddress,
        work_coords: u.workCoords,
      }
    : {}),
  date_registered: u.dateRegistered,
});

const COORDS = /^\s*(-?\d+(\.\d+)?)\s*,\s*(-?\d+(\.\d+)?)\s*$/;
const WRITABLE = ['name', 'image_url', 'home_address', 'home_coords', 'work_address', 'work_coords'] as const;
const READ_ONLY = ['identity_user_id', 'email', 'date_registered'];

/** Checks a PATCH body; answers the field → messages map the spec describes. */
function validateProfile(body: unknown): ProfileUpdate {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'Invalid JSON');
  }
  const errors: Record<string, string[]> = {};
  const add = (field: string, msg: string) => {
    errors[field] = [...(errors[field] ?? []), msg];
  };
  const out: ProfileUpdate = {};
  for (const [k, v] of Object.entries(body)) {
    if (READ_ONLY.includes(k)) {
      add(k, 'This field is read-only.');
      continue;
    }
    if (!(WRITABLE as readonly string[]).includes(k)) {
      add(k, 'Unknown field.');
      continue;
    }
    if (k === 'name') {
      if (typeof v !== 'string') add(k, 'Not a valid string.');
      else if (v.trim().length === 0) add(k, 'This field may not be blank.');
      else if (v.length > 200) add(k, 'Ensure this field has no more than 200 characters.');
      else out.name = v.trim();
      continue;
    }
    if (v !== null && typeof v !== 'string') {
      add(k, 'Not a valid string.');
      continue;
    }
    if (typeof v === 'string' && v.length > 500) {
      add(k, 'Ensure this field has no more than 500 characters.');
      continue;
    }
    if ((k === 'home_coords' || k === 'work_coords') && typeof v === 'string') {
      const m = COORDS.exec(v);
      const [lon, lat] = m ? [Number(m[1]), Number(m[3])] : [Number.NaN, Number.NaN];
      if (!m || lon < -180 || lon > 180 || lat < -90 || lat > 90) {
        add(
          k,
          'Enter coordinates as "<longitude>,<latitude>" with longitude in [-180, 180] and latitude in [-90, 90].',
        );
        continue;
      }
      out[k] = `${lon},${lat}`;
      continue;
    }
    out[k as keyof ProfileUpdate] = v as never;
  }
  if (Object.keys(errors).length > 0) throw new HttpBodyError(400, errors);
  return out;
}

const rideBody = z.object({
  date_started: z.iso.datetime({ offset: true }),
  local_timezone: z.string().min(1).max(64),
  polyline: z.string().max(200_000).default(''),
  destination_name: z.string().max(200).nullable().optional(),
  destination_address: z.string().max(500).nullable().optional(),
  distance_traveled: z.number().min(0),
  duration_traveled: z.number().min(0),
  completed: z.boolean().default(false),
  event_id: z.number().int().positive().nullable().optional(),
  welcome_message: z.string().max(500).optional(),
});

const userRoutes: FastifyPluginAsyncZod = async (app) => {
  const me = (c: Credential): User => {
    if (c.type !== 'user') throw new HttpError(401, 'Authentication credentials were not provided.');
    const u = app.repos.users.byId(c.user.id);
    if (!u) throw new HttpError(404, 'User not found');
    return u;
  };

  const viewRide = (r: RideRecord) => {
    const event = r.eventId === null ? undefined : app.repos.platform.event(r.eventId);
    return {
      id: r.id,
      date_started: r.dateStarted,
      local_timezone: r.localTimezone,
      polyline: r.polyline,
      ...(r.destinationName !== null ? { destination_name: r.destinationName } : {}),
      ...(r.destinationAddress !== null ? { destination_address: r.destinationAddress } : {}),
      distance_traveled: r.distanceTraveled,
      duration_traveled: r.durationTraveled,
      completed: r.completed,
      event: event ? viewEvent(event) : null,
      weather_conditions: r.weatherConditions ?? [],
      temperature: r.temperature,
      wind_speed: r.windSpeed,
      weather_fetched_at: r.weatherFetchedAt,
      weather_display: r.weatherDisplay,
      images: r.images,
      ...(r.welcomeMessage ? { welcome_message: r.welcomeMessage } : {}),
    };
  };

  app.get(
    '/user/',
    { config: profileAccess, schema: { tags: ['user'], summary: 'The rider profile' } },
    async (req) => viewProfile(me(req.credential)),
  );

  app.patch(
    '/user/',
    { config: profileAccess, schema: { tags: ['user'], summary: 'Update the rider profile (partial)' } },
    async (req) => {
      const user = me(req.credential);
      const update = validateProfile(req.body);
      app.repos.platform.updateProfile(user.id, update);
      return { status: 'success', updated_fields: Object.keys(update) };
    },
  );

  app.post(
    '/user/upload-photo/',
    {
      config: profileAccess,
      schema: { tags: ['user'], summary: 'Upload a profile photo (multipart field `photo`); sets image_url' },
    },
    async (req) => {
      const user = me(req.credential);
      const [photo] = await receiveImages(req, app.storage, user.identityUserId, app.uploadLimits, {
        fields: ['photo', 'image'],
        maxFiles: 1,
        label: 'photo',
        keyFor: (ext) => `avatars/${user.identityUserId}/${randomUUID()}.${ext}`,
      });
      try {
        app.repos.platform.updateProfile(user.id, { image_url: (photo as StoredImage).url });
      } catch (err) {
        await app.storage.delete((photo as StoredImage).key);
        throw err;
      }
      return viewProfile(me(req.credential));
    },
  );

  app.get(
    '/user/stats/',
    {
      config: profileAccess,
      schema: { tags: ['user'], summary: 'Ride totals and per-month rides, distance and duration' },
    },
    async (req) => {
      const user = me(req.credential);
      const months = app.repos.platform.rideStats(user.id);
      const sum = (f: (m: (typeof months)[number]) => number) => months.reduce((a, m) => a + f(m), 0);
      return {
        total_rides: sum((m) => m.rides),
        total_distance: sum((m) => m.distance),
        total_duration: sum((m) => m.duration),
        months: months.map((m) => ({
          month: m.month,
          rides: m.rides,
          distance: m.distance,
          duration: m.duration,
        })),
      };
    },
  );

  app.get(
    '/user/routes/',
    {
      config: profileAccess,
      schema: {
        tags: ['user'],
        summary: 'The rider’s rides, newest first (paginated)',
        querystring: z.object({
          page: z.coerce.number().int().min(1).default(1),
          page_size: z.coerce.number().int().min(1).max(100).default(20),
        }),
      },
    },
    async (req) => {
      const user = me(req.credential);
      const { page, page_size } = req.query;
      const { total, rides } = app.repos.platform.rides(user.id, (page - 1) * page_size, page_size);
      return {
        count: total,
        page,
        page_size,
        next: page * page_size < total ? page + 1 : null,
        previous: page > 1 ? page - 1 : null,
        results: rides.map(viewRide),
      };
    },
  );

  app.post(
    '/user/routes/',
    { config: profileAccess, schema: { tags: ['user'], summary: 'Record a ride', body: rideBody } },
    async (req, reply) => {
      const user = me(req.credential);
      const b = req.body;
      if (b.event_id && !app.repos.platform.event(b.event_id))
        throw new HttpError(400, 'event_id: no such event');
      const ride = app.repos.platform.addRide({
        userId: user.id,
        dateStarted: b.date_started,
        localTimezone: b.local_timezone,
        polyline: b.polyline,
        destinationName: b.destination_name ?? null,
        destinationAddress: b.destination_address ?? null,
        distanceTraveled: b.distance_traveled,
        durationTraveled: b.duration_traveled,
        completed: b.completed,
        eventId: b.event_id ?? null,
        weatherConditions: null,
        temperature: null,
        windSpeed: null,
        weatherFetchedAt: null,
        weatherDisplay: null,
        welcomeMessage: b.welcome_message ?? null,
      });
      // The weather fields fill in shortly after, from the weather service.
      app.rideWeather.fetchFor(ride);
      return reply.status(201).send(viewRide(ride));
    },
  );

  app.get(
    '/user/routes/:route_id/',
    {
      config: profileAccess,
      schema: {
        tags: ['user'],
        summary: 'One of the rider’s rides',
        params: z.object({ route_id: z.coerce.number().int() }),
      },
    },
    async (req) => {
      const user = me(req.credential);
      const ride = app.repos.platform.ride(req.params.route_id);
      // Another rider's ride is as good as missing.
      if (!ride || ride.userId !== user.id) throw new HttpError(404, 'Route not found');
      return viewRide(ride);
    },
  );

  app.get(
    '/api/users/search/',
    {
      config: { access: { allow: ['user'], oauth: 'forbid' }, rateClass: 'profile' },
      schema: {
        tags: ['user'],
        summary: 'Find riders by name',
        querystring: z.object({ q: z.string().optional() }),
      },
    },
    async (req) => {
      const c = req.credential;
      const q = (req.query.q ?? '').trim();
      if (q.length < 3) throw new HttpError(400, 'Search query must be at least 3 characters');
      const admin = c.type === 'user' && c.user.role === 'admin';
      const users = app.repos.platform
        .searchUsers(q, 50)
        .map((id) => app.repos.users.byId(id))
        .filter((u): u is User => u !== undefined)
        .map((u) => viewProfile(u, admin));
      return { count: users.length, users };
    },
  );
};

export default userRoutes;

// Rider profiles, rides, user search, events and event images, with the permission matrix.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { encodePolyline } from '../../server/src/routing/polyline.js';
import { testConfig } from '../helpers.js';

let app: FastifyInstance;
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const tokens: Record<'owner' | 'other' | 'admin', string> = { owner: '', other: '', admin: '' };
let oauthToken = '';

// A real 1×1 PNG, and a text file that claims to be a JPEG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const FAKE_JPEG = Buffer.from('this is not an image, just text named .jpg\n');

function multipart(
  field: string,
  files: { name: string; type: string; data: Buffer }[],
  auth: Record<string, string> = {},
) {
  const boundary = '----quietway-test-boundary';
  const parts = files.map((f) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${f.name}"\r\nContent-Type: ${f.type}\r\n\r\n`,
      ),
      f.data,
      Buffer.from('\r\n'),
    ]),
  );
  return {
    payload: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]),
    headers: { ...auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

async function signUp(email: string, name: string) {
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/signup',
    payload: { email, password: 'long enough pw', name },
  });
  expect(res.statusCode).toBe(201);
  return res.json().access_token as string;
}

beforeAll(async () => {
  app = await buildApp({ config: testConfig({ QUIETWAY_PUBLIC_URL: 'http://quietway.test' }) });
  tokens.owner = await signUp('owner@example.org', 'Olive Owner');
  tokens.other = await signUp('other@example.org', 'Otto Other');
  await signUp('admin@example.org', 'Ada Admin');
  app.repos.users.setRole('admin@example.org', 'admin');
  const res = await app.inject({
    method: 'POST',
    url: '/auth/v1/token?grant_type=password',
    payload: { email: 'admin@example.org', password: 'long enough pw' },
  });
  tokens.admin = res.json().access_token;
  const owner = app.repos.users.byEmail('owner@example.org');
  if (!owner) throw new Error('no owner');
  oauthToken = await app.tokens.issueAccessToken(
    owner,
    app.repos.sessions.create(owner.id, 'app-1'),
    'app-1',
  );
});
afterAll(() => app.close());

describe('profile', () => {
  it('reads and updates the profile, refusing read-only fields and bad coordinates', async () => {
    const me = await app.inject({ method: 'GET', url: '/user/', headers: bearer(tokens.owner) });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      email: 'owner@example.org',
      name: 'Olive Owner',
      image_url: null,
      home_coords: null,
    });
    const ok = await app.inject({
      method: 'PATCH',
      url: '/user/',
      headers: bearer(tokens.owner),
      payload: { name: 'Olive O.', home_coords: '-73.99,40.73', work_address: null },
    });
    expect(ok.json()).toEqual({ status: 'success', updated_fields: ['name', 'home_coords', 'work_address'] });
    const bad = await app.inject({
      method: 'PATCH',
      url: '/user/',
      headers: bearer(tokens.owner),
      payload: { email: 'x@y.z', work_coords: '40.7,-200', name: '' },
    });
    expect(bad.statusCode).toBe(400);
    const errors = bad.json();
    expect(errors.email).toEqual(['This field is read-only.']);
    expect(errors.work_coords[0]).toMatch(/longitude/);
    expect(errors.name).toHaveLength(1);
    const invalid = await app.inject({
      method: 'PATCH',
      url: '/user/',
      headers: { ...bearer(tokens.owner), 'content-type': 'application/json' },
      payload: '{"name": ',
    });
    expect(invalid.json()).toEqual({ error: 'Invalid JSON' });
    expect(
      (await app.inject({ method: 'GET', url: '/user/', headers: bearer(tokens.owner) })).json().home_coords,
    ).toBe('-73.99,40.73');
  });

  it('refuses anonymous callers and OAuth tokens', async () => {
    const anon = await app.inject({ method: 'GET', url: '/user/' });
    expect(anon.statusCode).toBe(401);
    expect(anon.json()).toEqual({ error: 'Authentication credentials were not provided.' });
    const oauth = await app.inject({ method: 'GET', url: '/user/', headers: bearer(oauthToken) });
    expect(oauth.statusCode).toBe(401);
    expect(oauth.json()).toEqual({ error: 'OAuth access tokens are not accepted by this endpoint' });
    const search = await app.inject({
      method: 'GET',
      url: '/api/users/search/?q=oli',
      headers: bearer(oauthToken),
    });
    expect(search.statusCode).toBe(403);
  });

  it('uploads a real photo and refuses a disguised one', async () => {
    const up = await app.inject({
      method: 'POST',
      url: '/user/upload-photo/',
      ...multipart('photo', [{ name: 'me.png', type: 'image/png', data: PNG }], bearer(tokens.owner)),
    });
    expect(up.statusCode).toBe(200);
    const url: string = up.json().image_url;
    expect(url).toMatch(/^http:\/\/quietway\.test\/storage\/v1\/object\/public\/avatars\/.+\.png$/);
    const file = await app.inject({ method: 'GET', url: new URL(url).pathname });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.rawPayload.equals(PNG)).toBe(true);
    const fake = await app.inject({
      method: 'POST',
      url: '/user/upload-photo/',
      ...multipart('photo', [{ name: 'me.jpg', type: 'image/jpeg', data: FAKE_JPEG }], bearer(tokens.owner)),
    });
    expect(fake.statusCode).toBe(400);
    expect(fake.json().error).toMatch(/not a JPEG, PNG, GIF or WebP image/);
  });
});

describe('rides', () => {
  it('records rides, lists them by page, counts them and keeps them private', async () => {
    for (const [i, day] of ['2026-10-03', '2026-11-05', '2026-11-20'].entries()) {
      const res = await app.inject({
        method: 'POST',
        url: '/user/routes/',
        headers: bearer(tokens.owner),
        payload: {
          date_started: `${day}T08:0${i}:00-05:00`,
          local_timezone: 'America/New_York',
          polyline: encodePolyline([
            [-73.99, 40.73],
            [-73.98, 40.74],
          ]),
          destination_name: 'Office',
          distance_traveled: 1000 * (i + 1),
          duration_traveled: 300 * (i + 1),
          completed: true,
        },
      });
      expect(res.statusCode).toBe(201);
    }
    const page = (
      await app.inject({
        method: 'GET',
        url: '/user/routes/?page=1&page_size=2',
        headers: bearer(tokens.owner),
      })
    ).json();
    expect(page.count).toBe(3);
    expect(page.results).toHaveLength(2);
    expect(page.next).toBe(2);
    expect(page.results[0].date_started).toMatch(/^2026-11-20/);
    const id = page.results[0].id;
    const one = await app.inject({
      method: 'GET',
      url: `/user/routes/${id}/`,
      headers: bearer(tokens.owner),
    });
    expect(one.json()).toMatchObject({
      id,
      distance_traveled: 3000,
      completed: true,
      event: null,
      weather_conditions: [],
    });
    const theirs = await app.inject({
      method: 'GET',
      url: `/user/routes/${id}/`,
      headers: bearer(tokens.other),
    });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toEqual({ error: 'Route not found' });
    const stats = (
      await app.inject({ method: 'GET', url: '/user/stats/', headers: bearer(tokens.owner) })
    ).json();
    expect(stats).toMatchObject({ total_rides: 3, total_distance: 6000, total_duration: 1800 });
    expect(stats.months.map((m: { month: string; rides: number }) => [m.month, m.rides])).toEqual([
      ['2026-10', 1],
      ['2026-11', 2],
    ]);
  });
});

describe('user search', () => {
  it('matches names partially, case-insensitively, and shows private fields only to admins', async () => {
    const short = await app.inject({
      method: 'GET',
      url: '/api/users/search/?q=ol',
      headers: bearer(tokens.other),
    });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toEqual({ error: 'Search query must be at least 3 characters' });
    const rider = (
      await app.inject({ method: 'GET', url: '/api/users/search/?q=OLIV', headers: bearer(tokens.other) })
    ).json();
    expect(rider.count).toBe(1);
    expect(rider.users[0].email).toBeUndefined();
    expect(rider.users[0]).toMatchObject({ name: 'Olive O.', identity_user_id: expect.any(String) });
    const admin = (
      await app.inject({ method: 'GET', url: '/api/users/search/?q=oliv', headers: bearer(tokens.admin) })
    ).json();
    expect(admin.users[0]).toMatchObject({ email: 'owner@example.org', home_coords: '-73.99,40.73' });
    const wildcard = (
      await app.inject({
        method: 'GET',
        url: '/api/users/search/?q=%25%25%25',
        headers: bearer(tokens.admin),
      })
    ).json();
    expect(wildcard.count).toBe(0);
  });
});

describe('events', () => {
  const iso = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
  // A route starting in Manhattan (New York City's borders), ending 300 m north.
  const route = {
    distance: 300,
    duration: 80,
    polyline: encodePolyline([
      [-73.99, 40.73],
      [-73.99, 40.7327],
    ]),
  };
  const create = (token: string, body: Record<string, unknown>) =>
    app.inject({ method: 'POST', url: '/api/admin/events/', headers: bearer(token), payload: body });

  it('creates events with unique aliases, the computed city and derived flags', async () => {
    const cat = await app.inject({
      method: 'POST',
      url: '/api/admin/event-categories/',
      headers: bearer(tokens.admin),
      payload: { name: 'Group ride', emoji: '🚲' },
    });
    expect(cat.statusCode).toBe(201);
    const riderCat = await app.inject({
      method: 'POST',
      url: '/api/admin/event-categories/',
      headers: bearer(tokens.owner),
      payload: { name: 'x' },
    });
    expect(riderCat.statusCode).toBe(403);
    const discount = await app.inject({
      method: 'POST',
      url: '/api/admin/discounts/',
      headers: bearer(tokens.admin),
      payload: { name: '10% off', terms: 'Show the app' },
    });
    const a = await create(tokens.owner, {
      name: 'Sunday Social Ride!',
      start_time: iso(1),
      end_time: iso(1.1),
      route,
      category_ids: [cat.json().id],
      discount_id: discount.json().id,
    });
    expect(a.statusCode).toBe(201);
    const ev = a.json();
    expect(ev).toMatchObject({
      alias: 'sunday-social-ride',
      city: 'New York City',
      is_future: true,
      is_happening_now: false,
      is_current_or_future: true,
      is_leisure_route: false,
      has_discount: true,
      discount: { name: '10% off', terms: 'Show the app' },
      categories: [{ name: 'Group ride', emoji: '🚲' }],
      visits_total: 0,
    });
    const b = await create(tokens.owner, {
      name: 'Sunday Social Ride',
      start_time: iso(2),
      end_time: iso(2.1),
      route,
    });
    expect(b.json().alias).toBe('sunday-social-ride-2');
    const noTimes = await create(tokens.owner, { name: 'x', route });
    expect(noTimes.statusCode).toBe(400);
    expect(noTimes.json().error).toMatch(/^start_time: /);
    // Public reading by id and alias, and the two 404 bodies.
    expect((await app.inject({ method: 'GET', url: `/events/${ev.id}/` })).json().alias).toBe(
      'sunday-social-ride',
    );
    expect((await app.inject({ method: 'GET', url: '/events/sunday-social-ride/' })).json().id).toBe(ev.id);
    expect((await app.inject({ method: 'GET', url: '/events/999999/' })).json()).toEqual({
      error: 'Event not found',
      event_id: 999999,
    });
    expect((await app.inject({ method: 'GET', url: '/events/no-such-ride/' })).json()).toEqual({
      error: 'Event not found',
      alias: 'no-such-ride',
    });
  });

  it('lists nearby events: upcoming or ongoing, then leisure routes, then recently ended, each by distance', async () => {
    // 40 m east of the earlier tests' route along -73.99, so "near" is the nearest of all.
    const near = [-73.9895, 40.731];
    const far = [-73.9895, 40.736];
    const mk = async (name: string, extra: Record<string, unknown>, at = near) => {
      const res = await create(tokens.admin, {
        name,
        destination: { name, latitude: at[1], longitude: at[0], area_name: 'Village' },
        ...extra,
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json();
    };
    await mk('Past ride', { start_time: iso(-3), end_time: iso(-2.9) });
    await mk('Long past ride', { start_time: iso(-30), end_time: iso(-29.9) });
    await mk('Leisure loop far away', { is_leisure_route: true }, [-0.1, 51.5]);
    await mk('Ongoing ride far', { start_time: iso(-0.1), end_time: iso(0.1) }, far);
    await mk('Ongoing ride near', { start_time: iso(-0.1), end_time: iso(0.1) });
    const res = await app.inject({
      method: 'GET',
      url: `/events/nearby/?latitude=${near[1]}&longitude=${near[0]}&radius=2000`,
    });
    expect(res.statusCode).toBe(200);
    const names = res.json().events.map((e: { name: string }) => e.name);
    const upcoming = names.slice(0, names.indexOf('Leisure loop far away'));
    expect(upcoming[0]).toBe('Ongoing ride near');
    expect(upcoming).toContain('Ongoing ride far');
    expect(names.indexOf('Leisure loop far away')).toBeLessThan(names.indexOf('Past ride'));
    expect(names.at(-1)).toBe('Past ride');
    expect(names).not.toContain('Long past ride');
    const first = res.json().events[0];
    expect(first.distance).toBeLessThan(0.1);
    const filtered = await app.inject({
      method: 'GET',
      url: `/events/nearby/?latitude=${near[1]}&longitude=${near[0]}&area=village&categories=nothing`,
    });
    expect(filtered.json().events.map((e: { name: string }) => e.name)).toEqual([]);
  });

  it('lets the creator and admins read managed events, counts visits and ties rides to events', async () => {
    const ev = (
      await create(tokens.owner, { name: 'Visit me', start_time: iso(-1), end_time: iso(-0.9), route })
    ).json();
    const read = (token: string) =>
      app.inject({ method: 'GET', url: `/api/admin/events/${ev.id}/`, headers: bearer(token) });
    expect((await read(tokens.owner)).statusCode).toBe(200);
    expect((await read(tokens.admin)).statusCode).toBe(200);
    expect((await read(tokens.other)).statusCode).toBe(403);
    const list = (token: string) =>
      app
        .inject({ method: 'GET', url: '/api/admin/events/', headers: bearer(token) })
        .then((r) => r.json().events.map((e: { id: number }) => e.id));
    expect(await list(tokens.owner)).toContain(ev.id);
    expect(await list(tokens.other)).not.toContain(ev.id);
    expect(await list(tokens.admin)).toContain(ev.id);
    const discounts = await app.inject({
      method: 'GET',
      url: '/api/admin/discounts/',
      headers: bearer(tokens.other),
    });
    expect(discounts.json().discounts.length).toBeGreaterThan(0);
    for (const token of [tokens.owner, tokens.other, tokens.other]) {
      await app.inject({
        method: 'POST',
        url: '/user/routes/',
        headers: bearer(token),
        payload: {
          date_started: iso(-1),
          local_timezone: 'America/New_York',
          distance_traveled: 300,
          duration_traveled: 80,
          completed: true,
          event_id: ev.id,
        },
      });
    }
    const after = (await app.inject({ method: 'GET', url: `/events/${ev.id}/` })).json();
    expect(after.visits_total).toBe(2);
    expect(after.is_current_or_future).toBe(false);
    const rides = (
      await app.inject({ method: 'GET', url: '/user/routes/', headers: bearer(tokens.other) })
    ).json();
    expect(rides.results[0].event).toMatchObject({ id: ev.id, alias: 'visit-me' });
  });

  it('applies the permission matrix to event management and images', async () => {
    const ev = (
      await create(tokens.owner, { name: 'Owner ride', start_time: iso(5), end_time: iso(5.1), route })
    ).json();
    const upload = (token: string | null, files = [{ name: 'a.png', type: 'image/png', data: PNG }]) =>
      app.inject({
        method: 'POST',
        url: `/api/admin/events/${ev.id}/images/`,
        ...multipart('images', files, token ? bearer(token) : {}),
      });
    expect((await upload(null)).statusCode).toBe(401);
    expect((await upload(oauthToken)).statusCode).toBe(403);
    expect((await upload(tokens.other)).statusCode).toBe(403);
    const mine = await upload(tokens.owner, [
      { name: 'a.png', type: 'image/png', data: PNG },
      { name: 'b.png', type: 'image/png', data: PNG },
    ]);
    expect(mine.statusCode).toBe(201);
    expect(mine.json()).toMatchObject({
      success: true,
      images: [{ id: expect.any(Number) }, { id: expect.any(Number) }],
    });
    const fake = await upload(tokens.owner, [{ name: 'fake.jpg', type: 'image/jpeg', data: FAKE_JPEG }]);
    expect(fake.statusCode).toBe(400);
    expect((await upload(tokens.admin)).statusCode).toBe(201);
    const none = await app.inject({
      method: 'POST',
      url: `/api/admin/events/${ev.id}/images/`,
      ...multipart('other', [], bearer(tokens.owner)),
    });
    expect(none.statusCode).toBe(400);
    const images = (await app.inject({ method: 'GET', url: `/events/${ev.id}/` })).json().images;
    expect(images).toHaveLength(3);
    const first = images[0];
    const del = (token: string, imageId: number) =>
      app.inject({
        method: 'DELETE',
        url: `/api/admin/events/${ev.id}/images/${imageId}/`,
        headers: bearer(token),
      });
    expect((await del(tokens.other, first.id)).statusCode).toBe(403);
    expect((await del(tokens.owner, first.id)).json()).toMatchObject({ success: true });
    expect((await app.inject({ method: 'GET', url: new URL(first.image_url).pathname })).statusCode).toBe(
      404,
    );
    expect((await del(tokens.owner, first.id)).json()).toEqual({ error: 'Image not found for this event' });
    // Update and delete: the creator or an admin.
    const put = (token: string) =>
      app.inject({
        method: 'PUT',
        url: `/api/admin/events/${ev.id}/`,
        headers: bearer(token),
        payload: { name: 'Renamed', start_time: iso(5), end_time: iso(5.2), route },
      });
    expect((await put(tokens.other)).statusCode).toBe(403);
    expect((await put(tokens.admin)).json().name).toBe('Renamed');
    const remaining = (await app.inject({ method: 'GET', url: `/events/${ev.id}/` })).json().images;
    expect(
      (
        await app.inject({
          method: 'DELETE',
          url: `/api/admin/events/${ev.id}/`,
          headers: bearer(tokens.other),
        })
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await app.inject({
          method: 'DELETE',
          url: `/api/admin/events/${ev.id}/`,
          headers: bearer(tokens.owner),
        })
      ).statusCode,
    ).toBe(200);
    expect((await app.inject({ method: 'GET', url: `/events/${ev.id}/` })).statusCode).toBe(404);
    // Deleting the event deleted its images' files.
    for (const i of remaining)
      expect((await app.inject({ method: 'GET', url: new URL(i.image_url).pathname })).statusCode).toBe(404);
    expect((await upload(tokens.owner)).statusCode).toBe(404);
  });
});

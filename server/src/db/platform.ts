// Repositories of the rider platform: profiles, rides, events with categories, discounts and images.
import type { Db } from './sql.js';

export interface ProfileUpdate {
  name?: string;
  image_url?: string | null;
  home_address?: string | null;
  home_coords?: string | null;
  work_address?: string | null;
  work_coords?: string | null;
}

export interface RideRecord {
  id: number;
  userId: number;
  dateStarted: string;
  localTimezone: string;
  polyline: string;
  destinationName: string | null;
  destinationAddress: string | null;
  distanceTraveled: number;
  durationTraveled: number;
  completed: boolean;
  eventId: number | null;
  weatherConditions: string[] | null;
  temperature: number | null;
  windSpeed: number | null;
  weatherFetchedAt: string | null;
  weatherDisplay: string | null;
  welcomeMessage: string | null;
  images: { image_url: string; created_at: string }[];
}

export type NewRide = Omit<RideRecord, 'id' | 'images'>;

export interface EventRecord {
  id: number;
  name: string;
  alias: string;
  description: string;
  emoji: string;
  imageUrl: string | null;
  startTime: string | null;
  endTime: string | null;
  isLeisureRoute: boolean;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  destination: { name: string; latitude: number; longitude: number; areaName: string | null } | null;
  route: { distance: number; duration: number; polyline: string } | null;
  city: string | null;
  discount: { id: number; name: string; terms: string; emoji: string } | null;
  categories: { id: number; name: string; emoji: string }[];
  images: { id: number; image_url: string; created_at: string; storageKey: string; uploadedBy: string }[];
  visitsTotal: number;
}

export interface EventInput {
  name: string;
  description: string;
  emoji: string;
  imageUrl: string | null;
  startTime: string | null;
  endTime: string | null;
  isLeisureRoute: boolean;
  destination: { name: string; latitude: number; longitude: number; areaName: string | null } | null;
  route: { distance: number; duration: number; polyline: string } | null;
  city: string | null;
  discountId: number | null;
  categoryIds: number[];
}

export interface PlatformRepository {
  updateProfile(userId: number, update: ProfileUpdate): void;
  searchUsers(q: string, limit: number): number[];
  /** Every stored-file reference: event image keys, and the URLs of photos and images (may point elsewhere). */
  storageReferences(): string[];
  addRide(ride: NewRide): RideRecord;
  ride(id: number): RideRecord | undefined;
  /** Sets a ride's weather fields (fetched in the background after it is recorded). */
  setRideWeather(
    id: number,
    w: { conditions: string[]; temperature: number; windSpeed: number; fetchedAt: string; display: string },
  ): void;
  rides(userId: number, offset: number, limit: number): { total: number; rides: RideRecord[] };
  rideStats(userId: number): { month: string; rides: number; distance: number; duration: number }[];
  createEvent(e: EventInput, createdBy: string): EventRecord;
  updateEvent(id: number, e: EventInput): EventRecord;
  deleteEvent(id: number): void;
  event(id: number): EventRecord | undefined;
  eventByAlias(alias: string): EventRecord | undefined;
  allEvents(): EventRecord[];
  addEventImage(
    eventId: number,
    storageKey: string,
    imageUrl: string,
    uploadedBy: string,
  ): EventRecord['images'][number];
  deleteEventImage(eventId: number, imageId: number): EventRecord['images'][number] | undefined;
  createCategory(name: string, emoji: string): { id: number; name: string; emoji: string };
  categories(): { id: number; name: string; emoji: string }[];
  createDiscount(
    name: string,
    terms: string,
    emoji: string,
  ): { id: number; name: string; terms: string; emoji: string };
  discounts(): { id: number; name: string; terms: string; emoji: string }[];
}

const now = () => new Date().toISOString();

/** URL-friendly alias from a name, made unique with a numeric suffix. */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return base || 'event';
}

export function sqlPlatform(db: Db): PlatformRepository {
  const q = {
    rideInsert:
      db.prepare(`INSERT INTO rides (user_id, date_started, local_timezone, polyline, destination_name,
      destination_address, distance_traveled, duration_traveled, completed, event_id, weather_conditions, temperature,
      wind_speed, weather_fetched_at, weather_display, welcome_message, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    ride: db.prepare('SELECT * FROM rides WHERE id = ?'),
    rideWeather: db.prepare(`UPDATE rides SET weather_conditions = ?, temperature = ?, wind_speed = ?,
      weather_fetched_at = ?, weather_display = ? WHERE id = ?`),
    rideImages: db.prepare('SELECT image_url, created_at FROM ride_images WHERE ride_id = ? ORDER BY id'),
    rides: db.prepare(
      'SELECT * FROM rides WHERE user_id = ? ORDER BY date_started DESC, id DESC LIMIT ? OFFSET ?',
    ),
    rideCount: db.prepare('SELECT COUNT(*) AS n FROM rides WHERE user_id = ?'),
    rideStats: db.prepare(`SELECT substr(date_started, 1, 7) AS month, COUNT(*) AS rides,
      SUM(distance_traveled) AS distance, SUM(duration_traveled) AS duration
      FROM rides WHERE user_id = ? GROUP BY month ORDER BY month`),
    search: db.prepare(
      "SELECT id FROM users WHERE lower(name) LIKE lower(?) ESCAPE '\\' ORDER BY lower(name), id LIMIT ?",
    ),
    eventInsert:
      db.prepare(`INSERT INTO events (name, alias, description, emoji, image_url, start_time, end_time,
      is_leisure_route, created_by, created_at, updated_at, destination_name, destination_lat, destination_lon, area_name,
      route_distance, route_duration, route_polyline, city, discount_id)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    eventUpdate:
      db.prepare(`UPDATE events SET name = ?, description = ?, emoji = ?, image_url = ?, start_time = ?,
      end_time = ?, is_leisure_route = ?, updated_at = ?, destination_name = ?, destination_lat = ?, destination_lon = ?,
      area_name = ?, route_distance = ?, route_duration = ?, route_polyline = ?, city = ?, discount_id = ? WHERE id = ?`),
    eventDelete: db.prepare('DELETE FROM events WHERE id = ?'),
    event: db.prepare('SELECT * FROM events WHERE id = ?'),
    eventByAlias: db.prepare('SELECT * FROM events WHERE alias = ?'),
    aliasTaken: db.prepare('SELECT 1 FROM events WHERE alias = ?'),
    events: db.prepare('SELECT * FROM events ORDER BY id'),
    eventCats: db.prepare(
      'SELECT c.id, c.name, c.emoji FROM event_categories ec JOIN categories c ON c.id = ec.category_id WHERE ec.event_id = ? ORDER BY c.name',
    ),
    eventCatsClear: db.prepare('DELETE FROM event_categories WHERE event_id = ?'),
    eventCatAdd: db.prepare(
      'INSERT INTO event_categories (event_id, category_id) VALUES (?, ?) ON CONFLICT DO NOTHING',
    ),
    eventImages: db.prepare(
      'SELECT id, image_url, created_at, storage_key, uploaded_by FROM event_images WHERE event_id = ? ORDER BY id',
    ),
    imageInsert: db.prepare(
      'INSERT INTO event_images (event_id, storage_key, image_url, uploaded_by, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    image: db.prepare(
      'SELECT id, image_url, created_at, storage_key, uploaded_by FROM event_images WHERE id = ? AND event_id = ?',
    ),
    imageDelete: db.prepare('DELETE FROM event_images WHERE id = ?'),
    discount: db.prepare('SELECT id, name, terms, emoji FROM discounts WHERE id = ?'),
    discounts: db.prepare('SELECT id, name, terms, emoji FROM discounts ORDER BY id'),
    discountInsert: db.prepare('INSERT INTO discounts (name, terms, emoji) VALUES (?, ?, ?)'),
    categories: db.prepare('SELECT id, name, emoji FROM categories ORDER BY name'),
    categoryInsert: db.prepare('INSERT INTO categories (name, emoji) VALUES (?, ?)'),
    storageRefs: db.prepare(`SELECT storage_key FROM event_images
      UNION SELECT image_url FROM event_images
      UNION SELECT image_url FROM users WHERE image_url IS NOT NULL
      UNION SELECT image_url FROM events WHERE image_url IS NOT NULL
      UNION SELECT image_url FROM ride_images`),
    visits: db.prepare('SELECT COUNT(DISTINCT user_id) AS n FROM rides WHERE event_id = ? AND completed = 1'),
  };

  // biome-ignore lint/suspicious/noExplicitAny: rows of SELECT * are mapped field by field below.
  const toRide = (r: any): RideRecord => ({
    id: r.id,
    userId: r.user_id,
    dateStarted: r.date_started,
    localTimezone: r.local_timezone,
    polyline: r.polyline,
    destinationName: r.destination_name,
    destinationAddress: r.destination_address,
    distanceTraveled: r.distance_traveled,
    durationTraveled: r.duration_traveled,
    completed: r.completed === 1,
    eventId: r.event_id,
    weatherConditions: r.weather_conditions ? JSON.parse(r.weather_conditions) : null,
    temperature: r.temperature,
    windSpeed: r.wind_speed,
    weatherFetchedAt: r.weather_fetched_at,
    weatherDisplay: r.weather_display,
    welcomeMessage: r.welcome_message,
    images: q.rideImages.all(r.id) as RideRecord['images'],
  });

  // biome-ignore lint/suspicious/noExplicitAny: as above.
  const toEvent = (r: any): EventRecord => ({
    id: r.id,
    name: r.name,
    alias: r.alias,
    description: r.description,
    emoji: r.emoji,
    imageUrl: r.image_url,
    startTime: r.start_time,
    endTime: r.end_time,
    isLeisureRoute: r.is_leisure_route === 1,
    createdBy: r.created_by,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    destination:
      r.destination_lat === null
        ? null
        : {
            name: r.destination_name ?? '',
            latitude: r.destination_lat,
            longitude: r.destination_lon,
            areaName: r.area_name,
          },
    route:
      r.route_polyline === null
        ? null
        : { distance: r.route_distance ?? 0, duration: r.route_duration ?? 0, polyline: r.route_polyline },
    city: r.city,
    discount:
      r.discount_id === null ? null : ((q.discount.get(r.discount_id) as EventRecord['discount']) ?? null),
    categories: q.eventCats.all(r.id) as EventRecord['categories'],
    // biome-ignore lint/suspicious/noExplicitAny: image rows.
    images: (q.eventImages.all(r.id) as any[]).map((i) => ({
      id: i.id,
      image_url: i.image_url,
      created_at: i.created_at,
      storageKey: i.storage_key,
      uploadedBy: i.uploaded_by,
    })),
    visitsTotal: (q.visits.get(r.id) as { n: number }).n,
  });

  const uniqueAlias = (name: string) => {
    const base = slugify(name);
    let alias = base;
    for (let n = 2; q.aliasTaken.get(alias); n++) alias = `${base}-${n}`;
    return alias;
  };

  const eventParams = (e: EventInput) => [
    e.destination?.name ?? null,
    e.destination?.latitude ?? null,
    e.destination?.longitude ?? null,
    e.destination?.areaName ?? null,
    e.route?.distance ?? null,
    e.route?.duration ?? null,
    e.route?.polyline ?? null,
    e.city,
    e.discountId,
  ];

  const setCategories = (id: number, ids: number[]) => {
    q.eventCatsClear.run(id);
    for (const c of ids) q.eventCatAdd.run(id, c);
  };

  const PROFILE_COLUMNS = [
    'name',
    'image_url',
    'home_address',
    'home_coords',
    'work_address',
    'work_coords',
  ] as const;

  return {
    storageReferences: () => q.storageRefs.pluck().all() as string[],
    updateProfile(userId, update) {
      const cols = PROFILE_COLUMNS.filter((c) => c in update);
      if (cols.length === 0) return;
      db.prepare(`UPDATE users SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(
        ...cols.map((c) => update[c] ?? null),
        userId,
      );
    },
    searchUsers(text, limit) {
      const pattern = `%${text.replace(/[\\%_]/g, (m) => `\\${m}`)}%`;
      return (q.search.all(pattern, limit) as { id: number }[]).map((r) => r.id);
    },
    addRide(r) {
      const info = q.rideInsert.run(
        r.userId,
        r.dateStarted,
        r.localTimezone,
        r.polyline,
        r.destinationName,
        r.destinationAddress,
        r.distanceTraveled,
        r.durationTraveled,
        r.completed ? 1 : 0,
        r.eventId,
        r.weatherConditions ? JSON.stringify(r.weatherConditions) : null,
        r.temperature,
        r.windSpeed,
        r.weatherFetchedAt,
        r.weatherDisplay,
        r.welcomeMessage,
        now(),
      );
      return toRide(q.ride.get(info.lastInsertRowid));
    },
    ride: (id) => {
      const r = q.ride.get(id);
      return r ? toRide(r) : undefined;
    },
    setRideWeather(id, w) {
      q.rideWeather.run(JSON.stringify(w.conditions), w.temperature, w.windSpeed, w.fetchedAt, w.display, id);
    },
    rides(userId, offset, limit) {
      const total = (q.rideCount.get(userId) as { n: number }).n;
      return { total, rides: q.rides.all(userId, limit, offset).map(toRide) };
    },
    rideStats: (userId) =>
      q.rideStats.all(userId) as { month: string; rides: number; distance: number; duration: number }[],
    createEvent(e, createdBy) {
      return db.transaction(() => {
        const t = now();
        const info = q.eventInsert.run(
          e.name,
          uniqueAlias(e.name),
          e.description,
          e.emoji,
          e.imageUrl,
          e.startTime,
          e.endTime,
          e.isLeisureRoute ? 1 : 0,
          createdBy,
          t,
          t,
          ...eventParams(e),
        );
        const id = Number(info.lastInsertRowid);
        setCategories(id, e.categoryIds);
        return toEvent(q.event.get(id));
      })();
    },
    updateEvent(id, e) {
      return db.transaction(() => {
        q.eventUpdate.run(
          e.name,
          e.description,
          e.emoji,
          e.imageUrl,
          e.startTime,
          e.endTime,
          e.isLeisureRoute ? 1 : 0,
          now(),
          ...eventParams(e),
          id,
        );
        setCategories(id, e.categoryIds);
        return toEvent(q.event.get(id));
      })();
    },
    deleteEvent: (id) => {
      q.eventDelete.run(id);
    },
    event: (id) => {
      const r = q.event.get(id);
      return r ? toEvent(r) : undefined;
    },
    eventByAlias: (alias) => {
      const r = q.eventByAlias.get(alias);
      return r ? toEvent(r) : undefined;
    },
    allEvents: () => q.events.all().map(toEvent),
    addEventImage(eventId, storageKey, imageUrl, uploadedBy) {
      const created = now();
      const info = q.imageInsert.run(eventId, storageKey, imageUrl, uploadedBy, created);
      return {
        id: Number(info.lastInsertRowid),
        image_url: imageUrl,
        created_at: created,
        storageKey,
        uploadedBy,
      };
    },
    deleteEventImage(eventId, imageId) {
      // biome-ignore lint/suspicious/noExplicitAny: image row.
      const i = q.image.get(imageId, eventId) as any;
      if (!i) return undefined;
      q.imageDelete.run(imageId);
      return {
        id: i.id,
        image_url: i.image_url,
        created_at: i.created_at,
        storageKey: i.storage_key,
        uploadedBy: i.uploaded_by,
      };
    },
    createCategory(name, emoji) {
      const info = q.categoryInsert.run(name, emoji);
      return { id: Number(info.lastInsertRowid), name, emoji };
    },
    categories: () => q.categories.all() as { id: number; name: string; emoji: string }[],
    createDiscount(name, terms, emoji) {
      const info = q.discountInsert.run(name, terms, emoji);
      return { id: Number(info.lastInsertRowid), name, terms, emoji };
    },
    discounts: () => q.discounts.all() as { id: number; name: string; terms: string; emoji: string }[],
  };
}

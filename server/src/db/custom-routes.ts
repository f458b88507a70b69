// Saved custom routes: an event's route as stops ridden in order, attached to multi-modal trips by
// their UUID (`custom_route_id`).
import type { Db } from './sql.js';

export interface CustomRouteRecord {
  id: string;
  eventId: number;
  name: string;
  stops: [number, number][];
  createdBy: string;
  createdAt: string;
}

export interface CustomRouteRepository {
  create(r: Omit<CustomRouteRecord, 'createdAt'>): CustomRouteRecord;
  get(id: string): CustomRouteRecord | undefined;
  forEvent(eventId: number): CustomRouteRecord[];
  delete(id: string): boolean;
}

interface Row {
  id: string;
  event_id: number;
  name: string;
  stops: string;
  created_by: string;
  created_at: string;
}

const toRecord = (r: Row): CustomRouteRecord => ({
  id: r.id,
  eventId: r.event_id,
  name: r.name,
  stops: JSON.parse(r.stops) as [number, number][],
  createdBy: r.created_by,
  createdAt: r.created_at,
});

export function sqlCustomRoutes(db: Db): CustomRouteRepository {
  const q = {
    insert: db.prepare(
      'INSERT INTO custom_routes (id, event_id, name, stops, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    get: db.prepare('SELECT * FROM custom_routes WHERE id = ?'),
    forEvent: db.prepare('SELECT * FROM custom_routes WHERE event_id = ? ORDER BY created_at, id'),
    delete: db.prepare('DELETE FROM custom_routes WHERE id = ?'),
  };
  return {
    create: (r) => {
      const createdAt = new Date().toISOString();
      q.insert.run(r.id, r.eventId, r.name, JSON.stringify(r.stops), r.createdBy, createdAt);
      return { ...r, createdAt };
    },
    get: (id) => {
      const row = q.get.get(id) as Row | undefined;
      return row ? toRecord(row) : undefined;
    },
    forEvent: (eventId) => (q.forEvent.all(eventId) as Row[]).map(toRecord),
    delete: (id) => q.delete.run(id).changes > 0,
  };
}

// The Event resource as the API shows it, with the flags derived at read time.
import type { EventRecord } from '../../db/platform.js';

export function viewEvent(e: EventRecord, now = Date.now()) {
  const start = e.startTime ? Date.parse(e.startTime) : null;
  const end = e.endTime ? Date.parse(e.endTime) : null;
  const leisure = e.isLeisureRoute;
  // A leisure route is permanent: always current, never future or over.
  const happening = leisure || (start !== null && start <= now && (end === null || now < end));
  const future = !leisure && start !== null && start > now;
  const currentOrFuture = leisure || end === null || now < end;
  return {
    id: e.id,
    name: e.name,
    alias: e.alias,
    description: e.description,
    emoji: e.emoji,
    image_url: e.imageUrl,
    start_time: leisure ? null : e.startTime,
    end_time: leisure ? null : e.endTime,
    created_by: e.createdBy,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    is_active: currentOrFuture,
    is_happening_now: happening,
    is_future: future,
    is_current_or_future: currentOrFuture,
    is_leisure_route: leisure,
    visits_total: e.visitsTotal,
    city: e.city,
    destination: e.destination
      ? {
          id: e.id,
          name: e.destination.name,
          latitude: e.destination.latitude,
          longitude: e.destination.longitude,
          area_name: e.destination.areaName,
          city: e.city,
          categories: e.categories.map((c) => c.name),
        }
      : null,
    route: e.route,
    categories: e.categories,
    images: e.images.map((i) => ({ id: i.id, image_url: i.image_url, created_at: i.created_at })),
    has_discount: e.discount !== null,
    ...(e.discount ? { discount: e.discount } : {}),
  };
}

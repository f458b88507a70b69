//! A planned route in the directions v2 shape: the route, its guidance worded, and the `route`
//! object written as JSON (the bulk of a directions response), with what a server puts beside it.

use crate::city::{City, RouteError, RouteRequest};
use crate::words::{WordedLeg, route_json};

/// A snapped waypoint as the API shows it.
#[derive(Clone, Debug)]
pub struct DirectionsWaypoint {
    /// `[lon, lat]` rounded to 6 decimals.
    pub location: [f64; 2],
    /// Metres between the requested and the snapped position.
    pub distance_m: f64,
    /// The name of the road snapped to.
    pub name: String,
}

#[derive(Clone, Debug)]
pub struct Directions {
    /// The v2 `route` object, serialized.
    pub route_json: String,
    /// The route's geometry, flat `[lon, lat, …]` (for disruptions near it).
    pub geometry: Vec<f64>,
    /// The directed arcs travelled.
    pub arc_ids: Vec<u32>,
    pub waypoints: Vec<DirectionsWaypoint>,
    /// The metric used (`supersafe_day`, …).
    pub metric: &'static str,
}

impl City {
    /// Plans a route and words it; `Ok(None)` when no route exists.
    pub fn directions(
        &self,
        req: &RouteRequest,
        ebike: bool,
    ) -> Result<Option<Directions>, RouteError> {
        let Some(route) = self.route(req)? else {
            return Ok(None);
        };
        let g = &self.graph;
        // Leg totals and shapes come from the steps: guidance already measured every piece.
        let mut guided = Vec::with_capacity(route.legs.len());
        for (i, leg) in route.legs.iter().enumerate() {
            let w = &route.waypoints[i];
            let (steps, stops) = self.guidance(leg, [w.lon, w.lat], req.profile, ebike);
            let mut geometry: Vec<[f64; 2]> = Vec::new();
            for st in &steps {
                for &q in &st.geometry {
                    if geometry.last() != Some(&q) {
                        geometry.push(q);
                    }
                }
            }
            guided.push((steps, stops, geometry));
        }
        let legs: Vec<WordedLeg> = guided
            .iter()
            .map(|(steps, stops, geometry)| WordedLeg {
                steps,
                stops,
                distance_m: steps.iter().map(|s| s.distance_m).sum(),
                duration_s: steps.iter().map(|s| s.duration_s).sum(),
                elevation_gain_m: steps.iter().map(|s| s.gain_m).sum(),
                elevation_loss_m: steps.iter().map(|s| s.loss_m).sum(),
                geometry,
            })
            .collect();
        let route_json = route_json(&legs, req.profile);
        let geometry: Vec<f64> = guided
            .iter()
            .flat_map(|(_, _, g)| g.iter().flatten().copied())
            .collect();
        let arc_ids = route
            .legs
            .iter()
            .flat_map(|l| l.pieces.iter().map(|p| p.arc))
            .collect();
        let waypoints = route
            .waypoints
            .iter()
            .map(|w| DirectionsWaypoint {
                location: [(w.lon * 1e6).round() / 1e6, (w.lat * 1e6).round() / 1e6],
                distance_m: w.distance_m,
                name: g
                    .string(g.way_name[g.edge_way[w.edge as usize] as usize])
                    .to_string(),
            })
            .collect();
        Ok(Some(Directions {
            route_json,
            geometry,
            arc_ids,
            waypoints,
            metric: route.metric.name(),
        }))
    }
}

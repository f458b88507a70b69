//! Quietway's graph pipeline: OSM extract → safety-rated cycling and walking graph.

pub mod build;
pub mod city;
pub mod dem;
pub mod osm;
pub mod places;
pub mod progress;
pub mod rules;
pub mod sidewalks;

//! `quietway-build-graph`: OSM extract → city graph. Invoked by `quietway build-graph`.

fn main() {
    eprintln!(
        "quietway-build-graph {}: the graph pipeline is not built yet",
        quietway_engine::VERSION
    );
    std::process::exit(2);
}

//! Developer tool: lists ways with a tag value (e.g. `junction=roundabout`, `oneway:bicycle=no`)
//! in an extract, with their names and first node's position, to pick test cases.
//! `cargo run --release -p quietway-graph-pipeline --example find_ways -- <file> <key> <value>`

use quietway_graph_pipeline::osm::{read_ways_and_relations, tag};
use quietway_graph_pipeline::progress::Progress;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, key, value] = &args[..] else {
        eprintln!("usage: find_ways <osm file> <key> <value>");
        std::process::exit(2);
    };
    let (ways, _, _) = read_ways_and_relations(file.as_ref(), &Progress::new(true)).unwrap();
    for w in ways {
        if tag(&w.tags, key) == Some(value.as_str()) {
            println!(
                "{} {:?} {:?} nodes {}",
                w.id,
                tag(&w.tags, "name").unwrap_or(""),
                tag(&w.tags, "highway").unwrap_or(""),
                w.refs.len()
            );
        }
    }
}

//! Sets up the link flags a Node-API addon needs.

fn main() {
  napi_build::setup();
}

// Generates the gRPC client and the messages from referee.proto at build time (needs protoc).
fn main() -> Result<(), Box<dyn std::error::Error>> {
    tonic_prost_build::configure()
        .build_server(false)
        .compile_protos(&["uno_arena/v1/referee.proto"], &["."])?;
    Ok(())
}

// swift-tools-version:6.0
import PackageDescription

// A harness for the event log's append alone, outside the service, so that two builds can
// be compared by instruction counts under callgrind. Built on its own (`swift build -c
// release` here); the repository's root package does not include it.
let package = Package(
    name: "append-harness",
    dependencies: [.package(name: "logbook", path: "../../..")],
    targets: [
        .executableTarget(
            name: "append-harness",
            dependencies: [
                .product(name: "LogbookSQLite", package: "logbook"),
                .product(name: "LogbookApplication", package: "logbook"),
            ])
    ]
)

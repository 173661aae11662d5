// swift-tools-version:6.0
// Logbook: an event-sourced domain service. One target per layer, and at the edge one per
// concern (wire, bus, processes, client); dependencies point inward. docs/architecture.md has
// the same table, checked against this file by scripts/check-architecture-doc.py.
import PackageDescription

/// Settings every Swift target shares: Swift 6 mode (complete concurrency checking)
/// plus the upcoming features that make dependencies and existentials explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Logbook",
    products: [
        .executable(name: "logbook", targets: ["logbook"]),
        .executable(name: "logbook-bench", targets: ["logbook-bench"]),
        .library(name: "LogbookDomain", targets: ["LogbookDomain"]),
        .library(name: "LogbookApplication", targets: ["LogbookApplication"]),
        .library(name: "LogbookSQLite", targets: ["LogbookSQLite"]),
        .library(name: "LogbookPostgres", targets: ["LogbookPostgres"]),
        .library(name: "LogbookJSON", targets: ["LogbookJSON"]),
        .library(name: "LogbookCrypto", targets: ["LogbookCrypto"]),
        .library(name: "LogbookWire", targets: ["LogbookWire"]),
        .library(name: "LogbookZMQ", targets: ["LogbookZMQ"]),
        .library(name: "LogbookFeed", targets: ["LogbookFeed"]),
        .library(name: "LogbookServer", targets: ["LogbookServer"]),
        .library(name: "LogbookClient", targets: ["LogbookClient"]),
        .library(name: "LogbookMetrics", targets: ["LogbookMetrics"]),
        .library(name: "LogbookLocks", targets: ["LogbookLocks"]),
    ],
    targets: [
        // C libraries from Debian's -dev packages.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        // zmq.h is on the default include path; pkg-config would add a flag SwiftPM rejects.
        .systemLibrary(
            name: "CZeroMQ", path: "Sources/CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]),
        // glibc's <malloc.h> (libc6-dev), for mallopt in the composition root.
        .systemLibrary(name: "CGlibcMalloc", path: "Sources/CGlibcMalloc"),
        // libmicrohttpd links directly, as libzmq does (its pkg-config adds p11-kit's include path).
        .systemLibrary(
            name: "CMicroHTTPD", path: "Sources/CMicroHTTPD",
            providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(
            name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        // libsystemd's sd_notify, for `Type=notify` units and their watchdog (composition root only).
        .systemLibrary(
            name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        // libsodium: authenticated encryption, keyed hashing and key derivation, for personal data.
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),

        // Support: a JSON reader/writer with precise errors and stable key order. No dependencies.
        .target(name: "LogbookJSON", swiftSettings: strictSettings),

        // Support: libsodium's authenticated encryption and keyed hashing, for personal data. Only CSodium.
        .target(name: "LogbookCrypto", dependencies: ["CSodium"], swiftSettings: strictSettings),

        // Support: `ConditionLock`, a value behind a lock with a condition variable, for the
        // threads that wait for one another (hand-overs, joins, stops). No dependencies.
        .target(name: "LogbookLocks", swiftSettings: strictSettings),

        // Domain: entities, values, commands, events, deciders. No dependencies at all.
        .target(name: "LogbookDomain", swiftSettings: strictSettings),

        // Application: use cases and the gateway protocols the adapters implement.
        .target(
            name: "LogbookApplication", dependencies: ["LogbookDomain", "LogbookJSON", "LogbookCrypto"],
            swiftSettings: strictSettings),

        // Data: event stores and read-model stores (in memory, for tests of the layers above; SQLite).
        .target(
            name: "LogbookMemory", dependencies: ["LogbookApplication"],
            swiftSettings: strictSettings),
        .target(
            name: "LogbookSQLite", dependencies: ["LogbookApplication", "LogbookLocks", "CSQLite"],
            swiftSettings: strictSettings),
        // The scale-out log: PostgreSQL through libpq, shared by workers in many processes.
        .target(
            name: "LogbookPostgres", dependencies: ["LogbookApplication", "CPostgres"],
            swiftSettings: strictSettings),

        // Interface adapters, wire: the JSON framing of requests, replies, envelopes and log
        // pages (wire contract version 1, `schemas/`) and its byte fast paths, shared by the
        // servers, the client and the command line so that all of them read and write the same bytes.
        .target(
            name: "LogbookWire", dependencies: ["LogbookApplication", "LogbookDomain", "LogbookJSON"],
            swiftSettings: strictSettings),
        // Interface adapters, bus: the libzmq wrapper (one owning thread per socket), the
        // endpoints and CURVE security. Knows sockets, not the messages they carry.
        .target(name: "LogbookZMQ", dependencies: ["LogbookLocks", "CZeroMQ"], swiftSettings: strictSettings),
        // Interface adapters, the protocol's client side: following the change feed without a
        // gap (the feed follower) and reading the log (the log-read channel), over the bus.
        .target(
            name: "LogbookFeed", dependencies: ["LogbookZMQ", "LogbookWire", "LogbookApplication", "LogbookJSON"],
            swiftSettings: strictSettings),
        // Interface adapters, metrics: Prometheus's text exposition format (fixed-bucket
        // histograms, the writer) and the HTTP endpoint that serves it (libmicrohttpd).
        .target(
            name: "LogbookMetrics", dependencies: ["CMicroHTTPD"],
            swiftSettings: strictSettings),
        // Interface adapters, processes: the worker and the query process, their loops and
        // threads, the rebuild job, start-up gates and the processes' diagnostics.
        .target(
            name: "LogbookServer",
            dependencies: [
                "LogbookZMQ", "LogbookFeed", "LogbookWire", "LogbookApplication", "LogbookDomain", "LogbookJSON",
                "LogbookMetrics", "LogbookLocks",
            ],
            swiftSettings: strictSettings),
        // Interface adapters: the async client library other Swift programs use to talk to the
        // servers. No server code.
        .target(
            name: "LogbookClient",
            dependencies: ["LogbookZMQ", "LogbookFeed", "LogbookWire", "LogbookApplication", "LogbookJSON"],
            swiftSettings: strictSettings),

        // Support: command and flag declarations, and the parsing and help made from them, for
        // both executables. No dependencies.
        .target(name: "LogbookCommandLine", swiftSettings: strictSettings),

        // Benchmarks: `logbook-bench` measures the real service beside baselines of the same run.
        .target(
            name: "LogbookBench",
            dependencies: [
                "LogbookDomain", "LogbookApplication", "LogbookJSON", "LogbookWire", "LogbookSQLite", "LogbookZMQ",
                "LogbookFeed", "CSQLite", "CPostgres", "LogbookCrypto", "LogbookMemory",
            ],
            path: "Benchmarks/LogbookBench",
            swiftSettings: strictSettings),

        // Composition root. No bench code: `logbook bench` runs `logbook-bench`.
        .executableTarget(
            name: "logbook",
            dependencies: [
                "LogbookCrypto", "LogbookDomain", "LogbookApplication", "LogbookJSON", "LogbookWire", "LogbookSQLite",
                "LogbookPostgres",
                "LogbookZMQ", "LogbookFeed", "LogbookServer", "LogbookClient", "LogbookCommandLine", "LogbookMetrics",
                "CGlibcMalloc", "CSystemd",
            ],
            swiftSettings: strictSettings),
        // The bench's executable, built beside `logbook`, whose worker and query process it measures.
        .executableTarget(
            name: "logbook-bench", dependencies: ["LogbookBench", "LogbookCommandLine", "CGlibcMalloc"],
            swiftSettings: strictSettings),

        // Helpers shared by the test targets (a seeded generator, sample events, a forwarding store,
        // raw SQL on SQLite files and PostgreSQL databases, throwaway test databases, the
        // read-model harness and its in-memory log); not shipped.
        .target(
            name: "LogbookTestSupport",
            dependencies: [
                "LogbookApplication", "LogbookDomain", "LogbookJSON", "LogbookMemory", "LogbookSQLite", "CSQLite",
                "CPostgres", "LogbookCrypto",
            ],
            path: "Tests/LogbookTestSupport",
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookJSONTests", dependencies: ["LogbookJSON", "LogbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookLocksTests", dependencies: ["LogbookLocks"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookCryptoTests", dependencies: ["LogbookCrypto"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookDomainTests", dependencies: ["LogbookDomain", "LogbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookApplicationTests",
            dependencies: [
                "LogbookApplication", "LogbookDomain", "LogbookJSON", "LogbookMemory", "LogbookTestSupport",
                "LogbookCrypto",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "EventStoreContractTests",
            dependencies: [
                "LogbookApplication", "LogbookJSON", "LogbookMemory", "LogbookSQLite", "LogbookPostgres",
                "LogbookWire", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        // One suite run against every `GroupStore` (in memory, SQLite, PostgreSQL when a test
        // server is configured), and the SQLite and PostgreSQL group stores' own rules.
        .testTarget(
            name: "GroupStoreContractTests",
            dependencies: [
                "LogbookApplication", "LogbookMemory", "LogbookSQLite", "LogbookPostgres", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        // One suite run against every `PersonKeyStore` (in memory, SQLite, PostgreSQL when a
        // test server is configured), and the SQLite and PostgreSQL key stores' own rules:
        // the files they refuse, their migrations, what a destroyed key leaves in their files
        // and tables, and two processes' vaults on one log and key store.
        .testTarget(
            name: "PersonKeyStoreContractTests",
            dependencies: [
                "LogbookApplication", "LogbookMemory", "LogbookSQLite", "LogbookPostgres", "LogbookTestSupport",
                "LogbookCrypto",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ReadModelContractTests",
            dependencies: [
                "LogbookApplication", "LogbookDomain", "LogbookJSON", "LogbookMemory", "LogbookWire",
                "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        // The SQLite adapters' own rules, beyond the contract suites: files, WAL, triggers,
        // the durable horizon, write turns, backups, checkpoints, the read-model store's file
        // and generations, an older and a newer build on one log.
        .testTarget(
            name: "LogbookSQLiteTests",
            dependencies: [
                "LogbookSQLite", "LogbookApplication", "LogbookDomain", "LogbookJSON", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        // The PostgreSQL event store's own rules, beyond the contract suite (skipped without a server).
        .testTarget(
            name: "LogbookPostgresTests",
            dependencies: [
                "LogbookPostgres", "LogbookApplication", "LogbookJSON", "LogbookMemory", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookWireTests",
            dependencies: ["LogbookWire", "LogbookApplication", "LogbookDomain", "LogbookJSON", "LogbookTestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookZMQTests",
            dependencies: [
                "LogbookZMQ", "LogbookFeed", "LogbookServer", "LogbookWire", "LogbookApplication", "LogbookDomain",
                "LogbookJSON", "LogbookMemory", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        // The worker and the query process in the test process (ipc:// sockets in a temporary
        // folder, an in-memory log, SQLite read models), workers and a feed process on PostgreSQL,
        // and the rules of the query thread and the feed's pacing as values.
        .testTarget(
            name: "LogbookServerTests",
            dependencies: [
                "LogbookServer", "LogbookZMQ", "LogbookFeed", "LogbookWire", "LogbookApplication", "LogbookDomain",
                "LogbookJSON", "LogbookMemory", "LogbookSQLite", "LogbookPostgres", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookMetricsTests", dependencies: ["LogbookMetrics"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookClientTests",
            dependencies: ["LogbookClient", "LogbookZMQ", "LogbookWire", "LogbookApplication", "LogbookJSON"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookCommandLineTests", dependencies: ["LogbookCommandLine"],
            swiftSettings: strictSettings),
        // The real declarations of both executables (`@testable import` of executable targets),
        // the arithmetic of `logbook top`, and the worker's random event ids.
        .testTarget(
            name: "LogbookCLIDeclarationTests",
            dependencies: [
                "logbook", "logbook-bench", "LogbookCommandLine", "LogbookClient", "LogbookZMQ", "LogbookWire",
                "LogbookServer", "LogbookSQLite", "LogbookApplication", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookBenchTests",
            dependencies: [
                "LogbookBench", "LogbookApplication", "LogbookDomain", "LogbookMemory", "LogbookSQLite", "LogbookJSON",
                "LogbookWire", "LogbookTestSupport",
            ],
            swiftSettings: strictSettings),
        .testTarget(
            name: "LogbookEndToEndTests",
            dependencies: [
                "logbook", "logbook-bench", "LogbookClient", "LogbookZMQ", "LogbookFeed", "LogbookWire",
                "LogbookApplication", "LogbookJSON", "LogbookTestSupport", "LogbookCrypto", "LogbookSQLite",
                "LogbookDomain", "LogbookPostgres",
            ],
            swiftSettings: strictSettings),
    ]
)

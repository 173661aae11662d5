public import LogbookApplication
public import LogbookMetrics
import LogbookWire
public import LogbookZMQ

/// The groups process (`logbook run groups`): one thread serving every consumer group on
/// the groups ROUTER, following the log (feed and `ReadLog`, as a query process does) for
/// each group and reading the groups' progress from a `GroupStore` opened on that thread,
/// and a commit thread writing that progress through a connection of its own.
/// `start()` returns once the socket is bound and the store is open and read, or throws why
/// not; `stop()` lets the loop hand on its last replies, then ends the threads.
///
/// With `security`, the groups socket is a CURVE server behind a ZAP handler; with
/// `clientKeys`, its feed and log connections are CURVE clients with the process's own key
/// (a `reader` on the worker or feed process).
public final class GroupsService: Sendable {
    private let context: ZMQContext
    private let endpoints: ServiceEndpoints
    private let openStore: @Sendable () throws(GroupStoreError) -> any GroupStore
    private let clock: any Clock
    private let diagnostics: Diagnostics
    private let security: ServerSecurity?
    private let clientKeys: CurveClientKeys?
    private let supervision: Supervision
    private let memberTimeoutMilliseconds: Int64
    private let idleCatchUpMilliseconds: Int
    private let threads = ThreadGroup()
    private let stopRequest: StopRequest
    private let metrics: GroupsMetrics

    /// How long, by default, a member may stay silent before its deliveries go to others.
    public static let defaultMemberTimeoutMilliseconds: Int64 = 5_000

    public init(
        endpoints: ServiceEndpoints, openStore: @escaping @Sendable () throws(GroupStoreError) -> any GroupStore,
        clock: any Clock, diagnostics: Diagnostics, security: ServerSecurity? = nil,
        clientKeys: CurveClientKeys? = nil, supervision: Supervision = Supervision(),
        memberTimeoutMilliseconds: Int64 = GroupsService.defaultMemberTimeoutMilliseconds,
        idleCatchUpMilliseconds: Int = 1_000
    ) throws(ZMQError) {
        context = try ZMQContext()
        stopRequest = try StopRequest()
        self.endpoints = endpoints
        self.openStore = openStore
        self.clock = clock
        self.diagnostics = diagnostics
        self.security = security
        self.clientKeys = clientKeys
        self.supervision = supervision
        self.memberTimeoutMilliseconds = memberTimeoutMilliseconds
        self.idleCatchUpMilliseconds = idleCatchUpMilliseconds
        metrics = GroupsMetrics(started: ProcessStart(clock))
    }

    public func start() throws(ServiceStartError) {
        if let security {
            do {
                try ZAPThread.start(
                    context, security: security, diagnostics: diagnostics, threads: threads, supervision: supervision)
            } catch {
                stop()
                throw error
            }
        }
        let ready = StartupGate()
        threads.start(name: "logbook-groups") { [self] in
            defer { stopRequest.loopEnded() }
            ready.serve(sockets: "groups socket", store: "group store") {
                let dispatcher = try GroupDispatcher(
                    store: try openStore(), memberTimeoutMilliseconds: memberTimeoutMilliseconds)
                let router = try ServerSockets.router(
                    context, at: endpoints.groups, replies: .deliveries, security: security)
                return try GroupsLoop(
                    router: router, context: context, endpoints: endpoints, clientKeys: clientKeys,
                    dispatcher: dispatcher, security: security, heartbeat: supervision.heartbeat(for: "groups"),
                    stop: stopRequest, diagnostics: diagnostics, metrics: metrics, clock: clock,
                    idleCatchUpMilliseconds: idleCatchUpMilliseconds, openStore: openStore,
                    commitHeartbeat: supervision.heartbeat(for: "groups commits"))
            }
        }
        do {
            try ready.wait()
        } catch {
            stop()
            throw error
        }
        diagnostics.info(
            "groups process started",
            [
                "groups": endpoints.groups, "feed": endpoints.feed, "log": endpoints.log,
                "security": security.map { "curve, \($0.allowList.entries.count) client keys" } ?? "off",
            ])
    }

    /// Reads the allow-list again (on SIGHUP); without security there is none to read.
    public func reloadAllowList() { AllowListReload.perform(security, reporting: diagnostics) }

    public func stop() {
        ServiceStop(stopRequest: stopRequest, loops: 1, context: context, threads: threads, ownsContext: true)
            .perform()
    }
}

extension GroupsService: MetricsSource {
    public func metricFamilies() -> [MetricFamily] { metrics.families() }
}

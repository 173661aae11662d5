/// The words `logbook help` prints.
enum HelpText {
    static let version = "0.1.0"

    static let overview = """
        logbook — an event-sourced store of users, posts, products and orders

        usage: logbook <command> [options]

        processes:
          up               run a worker and a query process (Ctrl-C stops both)
          run worker       the write side: commands, change feed, log reads
          run query        the read side: read models and queries

        client commands (talk to running processes over ZeroMQ):
          send TYPE DATA   send a command (e.g. RegisterUser '{"userId":"u1",…}') and print the reply
          query TYPE DATA  ask the query process (e.g. GetUser '{"userId":"u1"}')
          subscribe [T]    print the change feed as JSON lines (topics users,posts,products,orders)
          replay           print the log as JSON lines, one event envelope a line
          rebuild          rebuild the query process's read models from the log
          status           show the worker's and the query process's status

        on the worker's files:
          verify           re-check the whole log: positions, versions, stock, totals, emails

          bench            measure throughput, latency, feed, replay and memory beside baselines

          help [COMMAND]   show this text, or a command's options
          version          print the version

        settings (flag, else environment, else default):
          --data-dir DIR   LOGBOOK_DATA_DIR   ./.logbook
          --commands EP    LOGBOOK_COMMANDS   tcp://127.0.0.1:5555
          --feed EP        LOGBOOK_FEED       tcp://127.0.0.1:5556
          --queries EP     LOGBOOK_QUERIES    tcp://127.0.0.1:5557
          --log EP         LOGBOOK_LOG        tcp://127.0.0.1:5558
          --log-level L    LOGBOOK_LOG_LEVEL  info (debug, info, warning, error)
        exit status: 0 ok, 1 error reply, 2 bad command line, 3 no reply, or data directory unusable
        """

    static let clientOptions = """
          --timeout-ms N           wait this long for each attempt (default 5000)
          --attempts N             try this many times, on a fresh socket each time (default 3)
          --commands/--queries/--log/--feed EP   where the processes listen
        """

    static func forCommand(_ name: String) -> String? {
        switch name {
        case "send":
            """
            usage: logbook send TYPE DATA [options]

            Sends one command to the worker and prints its reply as JSON:
            {"id","ok":true,"position","events":[…]} or {"id","ok":false,"error":{"code","message","details"}}.
            DATA is the command's JSON object, or - to read it from standard input.

            options:
              --id ID                  the command id (default: a new UUID); sending an id again
                                       returns the first outcome and appends nothing
              --expected-version V     an integer, any or noStream: the version the command's
                                       main stream must be at
              --correlation-id ID      the conversation the command belongs to
              --causation-id ID        what caused the command
            \(clientOptions)
            """
        case "query":
            """
            usage: logbook query TYPE [DATA] [options]

            Asks the query process and prints its reply: {"id","ok":true,"position","result"}.
            Types: GetUser, ListUsers, GetPost, ListPosts, GetProduct, ListProducts, ListOrders.

            options:
              --min-position N   answer only once the read models include position N
              --wait-ms N        how long the query process may wait for it (default 5000)
            \(clientOptions)
            """
        case "subscribe":
            """
            usage: logbook subscribe [TOPICS] [options]

            Prints the change feed as JSON lines, one event envelope a line, in position order,
            with no hole and no repeat (what the feed drops is read from the log). TOPICS is a
            comma-separated list of users, posts, products, orders, or all (the default).

            options:
              --from N    start at position N (to resume: the last position printed + 1);
                          default: the log's head, i.e. only what happens from now on
              --limit N   stop after N events
              --feed EP, --log EP   the worker's feed and log sockets
            """
        case "replay":
            """
            usage: logbook replay [options]

            Prints the log as JSON lines, one event envelope a line, in position order, read
            from the worker's log socket, up to the head as it is when replay gets there.

            options:
              --from N         the first position to print (default 1)
              --limit N        print at most N events
              --topics LIST    only these topics, comma-separated: users, posts, products, orders
            \(clientOptions)
            """
        case "rebuild":
            """
            usage: logbook rebuild [options]

            Has the query process rebuild its read models from position 1. It keeps answering
            queries from the old ones meanwhile and switches when the new ones have caught up.
            Shows a progress bar on a terminal, then prints {"ok":true,"generation","position","seconds"}.
            \(clientOptions)
            """
        case "status":
            """
            usage: logbook status [options]

            Prints {"worker":{…},"query":{…}}: the log's head, commands accepted and rejected,
            batch sizes; the query process's checkpoint, lag, read-model counts and rebuild state.
            A process that does not answer shows as {"unreachable":…} and the exit status is 1.
            \(clientOptions)
            """
        case "run":
            """
            usage: logbook run worker|query [options]

            Runs one process in the foreground until SIGINT or SIGTERM, logging to stderr.
            worker: binds --commands, --feed and --log; keeps DIR/events.sqlite3.
            query:  binds --queries, connects to --feed and --log; keeps DIR/readmodels-N.sqlite3.

            options: --data-dir DIR, --commands/--feed/--queries/--log EP, --log-level L
            """
        case "up":
            """
            usage: logbook up [options]

            Runs a worker and a query process as child processes with these settings, both
            logging to this terminal. Ctrl-C or SIGTERM stops both; if one ends on its own,
            the other is stopped and up exits 3.

            options: --data-dir DIR, --commands/--feed/--queries/--log EP, --log-level L
            """
        case "verify":
            """
            usage: logbook verify [--data-dir DIR]

            Reads the whole log and re-checks, independently of the code that wrote it, what
            the service promises: positions and versions without holes, every event readable,
            stock figures that follow from the ones before, exact order totals, and no email
            held by two live users. Prints {"ok":true,"events":N}, or "ok":false with the
            first 100 violations (position and problem) and exits 1.
            """
        case "bench":
            """
            usage: logbook bench [options]

            Starts a worker and a query process of this executable on free loopback ports in a
            scratch directory, measures them, and prints one table: each figure beside baselines
            measured in the same run on this machine (SQLite inserted directly, a bare libzmq echo,
            one fsync, a bare sequential read, Redis and PostgreSQL when installed), the ratio
            figure ÷ baseline and the target. Also writes the table as JSON. Progress goes to
            stderr; the servers' own logs stay in the scratch directory while it runs.
            Sections, in the order they run:
              replay      ReadLog rate, full rebuild and start-up catch-up on a generated log
              throughput  durable commands/s with 1, 8 and 64 pipelined clients
              latency     p50/p99/p99.9 for one client and at half the peak throughput
              feed        reply → feed message and send → feed message, p50/p99
              memory      peak RSS of the worker and the query process
              compare     Redis XADD (appendfsync always) and PostgreSQL INSERTs, same load

            options:
              --quick          small sizes, under a minute (a smoke test; figures are rough)
              --out FILE       the JSON report (default bench-results.json)
              --only LIST      only these sections, comma-separated
              --clients LIST   client counts of the throughput runs (default 1,8,64)
              --window N       commands each client keeps in flight (default 16)
              --threads N      threads the load clients run on (default 2)
              --seconds N      length of each throughput run and its baselines (default 5; quick 1)
              --events N       events in the generated log (default 1000000; quick 20000)
              --streams N      streams in the generated log (default 100000; quick 2000)
              --feed-rate N    feed events a second in the feed run (default 10000; quick 1000)
              --samples N      round trips for the one-client latency (default 10000; quick 200)
              --data-dir DIR   an empty directory to work in, kept afterwards (default: a fresh
                               temporary directory, removed at the end; LOGBOOK_DATA_DIR is ignored)
            exit status: 0 every section ran, 2 bad command line, 3 a section failed
            """
        default:
            nil
        }
    }
}

/// The words `logbook help` prints.
enum HelpText {
    static let version = "0.1.0"

    static let overview = """
        logbook — an event-sourced store of users, posts, products and orders

        usage: logbook <command> [options]

        commands:
          send TYPE DATA   run one command (e.g. RegisterUser '{"userId":"u1",…}') and print the reply
          replay           print the log as JSON lines, one event envelope a line
          verify           re-check the whole log: positions, versions, stock, totals, emails
          help [COMMAND]   show this text, or a command's options
          version          print the version

        every command takes --data-dir DIR (or LOGBOOK_DATA_DIR; default ./.logbook)
        exit status: 0 ok, 1 error reply, 2 bad command line, 3 data directory or log unusable
        """

    static func forCommand(_ name: String) -> String? {
        switch name {
        case "send":
            """
            usage: logbook send TYPE DATA [options]

            Runs one command against the event log and prints the reply as JSON:
            {"id","ok":true,"position","events":[…]} or {"id","ok":false,"error":{"code","message","details"}}.
            DATA is the command's JSON object, or - to read it from standard input.

            options:
              --id ID                  the command id (default: a new UUID); sending an id again
                                       returns the first outcome and appends nothing
              --expected-version V     an integer, any or noStream: the version the command's
                                       main stream must be at
              --correlation-id ID      the conversation the command belongs to
              --causation-id ID        what caused the command
              --data-dir DIR           where the event log lives
            """
        case "replay":
            """
            usage: logbook replay [options]

            Prints the log as JSON lines, one event envelope a line, in position order.

            options:
              --from N         the first position to print (default 1)
              --limit N        print at most N events
              --topics LIST    only these topics, comma-separated: users, posts, products, orders
              --data-dir DIR   where the event log lives
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
        default:
            nil
        }
    }
}

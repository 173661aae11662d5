/// The commands of a throughput or latency run, per client, in a fixed cycle of four:
/// register a new user, add a new product, purchase (a seeded user buys one unit of a
/// seeded product, so it succeeds), create a post (by a seeded author). Every id carries
/// the run's `tag`, so runs against one worker never collide (ids are never reused).
struct CommandMix: LoadRequests {
    /// Unique for the run: letters and digits only.
    let tag: String
    /// The tag the users and products were seeded with (`SeedCommands`), per client.
    let seedTag: String
    let seeded: Int

    init(tag: String, seedTag: String? = nil, seeded: Int) {
        self.tag = tag
        self.seedTag = seedTag ?? tag
        self.seeded = seeded
    }

    func request(client: Int, sequence: Int) -> [UInt8] {
        let own = "\(tag)c\(client)n\(sequence)"
        let seed = "\(seedTag)c\(client)s\(sequence / 4 % seeded)"
        let command: String
        let data: String
        switch sequence % 4 {
        case 0:
            command = "RegisterUser"
            data = "{\"userId\":\"u\(own)\",\"name\":\"Bench User\",\"email\":\"u\(own)@bench.example\"}"
        case 1:
            command = "AddProduct"
            data =
                "{\"productId\":\"p\(own)\",\"name\":\"Bench tea\",\"price\":\"2.50\",\"category\":\"food\",\"stock\":100}"
        case 2:
            command = "PurchaseProduct"
            data = "{\"orderId\":\"o\(own)\",\"userId\":\"u\(seed)\",\"productId\":\"p\(seed)\",\"quantity\":1}"
        default:
            command = "CreatePost"
            data =
                "{\"postId\":\"t\(own)\",\"authorId\":\"u\(seed)\",\"title\":\"A bench post\","
                + "\"content\":\"Written by logbook bench to measure how fast commands are taken.\"}"
        }
        return Array("{\"id\":\"\(sequence)-\(own)\",\"type\":\"\(command)\",\"data\":\(data)}".utf8)
    }
}

/// The users and products a `CommandMix` with the same tag buys and posts with: per client,
/// `seeded` users and `seeded` products with a stock no run exhausts. Send
/// `2 × seeded` requests per client.
struct SeedCommands: LoadRequests {
    let tag: String
    let seeded: Int

    func request(client: Int, sequence: Int) -> [UInt8] {
        let seed = "\(tag)c\(client)s\(sequence / 2)"
        let command: String
        let data: String
        if sequence % 2 == 0 {
            command = "RegisterUser"
            data = "{\"userId\":\"u\(seed)\",\"name\":\"Seeded User\",\"email\":\"u\(seed)@bench.example\"}"
        } else {
            command = "AddProduct"
            data =
                "{\"productId\":\"p\(seed)\",\"name\":\"Seeded tea\",\"price\":\"1.25\",\"category\":\"food\","
                + "\"stock\":1000000000}"
        }
        return Array("{\"id\":\"\(sequence)-seed\(seed)\",\"type\":\"\(command)\",\"data\":\(data)}".utf8)
    }
}

/// Requests for the bare echo baseline: `{"id":"N-echo","ok":true,"pad":"…"}` padded to
/// the size of the service's requests.
struct EchoRequests: LoadRequests {
    let size: Int

    func request(client: Int, sequence: Int) -> [UInt8] {
        let head = "{\"id\":\"\(sequence)-echo\(client)\",\"ok\":true,\"pad\":\""
        let padding = String(repeating: "x", count: max(0, size - head.utf8.count - 2))
        return Array((head + padding + "\"}").utf8)
    }
}

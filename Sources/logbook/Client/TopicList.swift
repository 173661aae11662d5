import LogbookApplication
import LogbookCommandLine
import LogbookWire

/// Topic names from the command line (`users,orders`, `all`), checked against the contract's list.
enum TopicList {
    static func parse(_ words: [String]) throws(CLIError) -> [FeedTopic] {
        var topics: [FeedTopic] = []
        for name in words.flatMap({ $0.split(separator: ",") }).map(String.init) {
            if name == "all" { return FeedTopic.allCases }
            guard let topic = FeedTopic(rawValue: name) else {
                let known = FeedTopic.allCases.map(\.rawValue).joined(separator: ", ")
                throw .usage("unknown topic '\(name)' (known: \(known), or all)")
            }
            if !topics.contains(topic) { topics.append(topic) }
        }
        return topics.isEmpty ? FeedTopic.allCases : topics
    }
}

import LogbookApplication
import LogbookWire
import Testing

@Suite("Feed topics")
struct FeedTopicTests {
    @Test("the topic of a stream name is the topic of its category, for odd names too")
    func topicOfStream() {
        let names = [
            "user-u1", "post-p-1", "product-p1", "order-o1", "email-ann@example.com", "user", "users-u1", "userx-1",
            "use-1", "-user", "", "-", "order-", "product--", "Post-p1", "ünïcode-x", "user-ü",
        ]
        for name in names {
            #expect(
                FeedTopic(stream: name) == FeedTopic(category: RecordedEvent.category(ofStream: name)), "\(name)")
        }
        #expect(FeedTopic(stream: "user-u1") == .users)
        #expect(FeedTopic(stream: "email-a@b.co") == nil)
    }
}

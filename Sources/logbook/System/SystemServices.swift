import Foundation
import LogbookApplication
import LogbookDomain

/// The real clock, in whole milliseconds.
struct SystemClock: Clock {
    func now() -> Timestamp {
        Timestamp(millisecondsSinceEpoch: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}

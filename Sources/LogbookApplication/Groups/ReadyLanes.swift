/// A min-heap of `(position, stream)`: the streams whose next event may be delivered,
/// smallest position first, so that a group's checkpoint moves as early as it can, and the
/// lanes' low marks, whose smallest is just after the checkpoint. An entry whose lane has
/// moved on since is skipped by the caller (`ConsumerGroup` checks each one it pops or peeks
/// at against its lane).
struct ReadyLanes {
    private var heap: [(position: Int64, stream: String)] = []

    var count: Int { heap.count }

    /// The smallest entry, left in place.
    var min: (position: Int64, stream: String)? { heap.first }

    mutating func push(_ position: Int64, _ stream: String) {
        heap.append((position, stream))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].position < heap[parent].position else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popMin() -> (position: Int64, stream: String)? {
        guard let first = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < heap.count, heap[left].position < heap[smallest].position { smallest = left }
                if right < heap.count, heap[right].position < heap[smallest].position { smallest = right }
                guard smallest != parent else { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }

    mutating func removeAll() { heap.removeAll() }
}

/// A first-in, first-out queue with amortised O(1) `append` and `popFirst`.
struct FIFO<Element> {
  private var storage: [Element?] = []
  private var head = 0

  /// Whether the queue holds no elements.
  var isEmpty: Bool { head == storage.count }

  /// The number of queued elements.
  var count: Int { storage.count - head }

  /// Adds `element` at the back.
  mutating func append(_ element: Element) {
    storage.append(element)
  }

  /// Removes and returns the front element, or `nil` if the queue is empty.
  mutating func popFirst() -> Element? {
    guard head < storage.count else { return nil }
    let element = storage[head]
    storage[head] = nil
    head += 1
    if head == storage.count {
      storage.removeAll(keepingCapacity: true)
      head = 0
    } else if head >= 32 && head * 2 >= storage.count {
      storage.removeFirst(head)
      head = 0
    }
    return element
  }
}

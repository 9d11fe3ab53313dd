package queue

import "container/heap"

// keyedHeap is a priority queue whose items can also be found, replaced
// and removed by key in O(log n): what the active queue needs when a
// waiting pod is updated or deleted.
type keyedHeap[T any] struct {
	data heapData[T]
}

func newKeyedHeap[T any](keyOf func(T) string, less func(a, b T) bool) *keyedHeap[T] {
	return &keyedHeap[T]{data: heapData[T]{index: map[string]int{}, keyOf: keyOf, less: less}}
}

// AddOrUpdate inserts item, or replaces the item with the same key.
func (h *keyedHeap[T]) AddOrUpdate(item T) {
	key := h.data.keyOf(item)
	if i, ok := h.data.index[key]; ok {
		h.data.items[i] = item
		heap.Fix(&h.data, i)
		return
	}
	heap.Push(&h.data, item)
}

// Get returns the item with key.
func (h *keyedHeap[T]) Get(key string) (T, bool) {
	if i, ok := h.data.index[key]; ok {
		return h.data.items[i], true
	}
	var zero T
	return zero, false
}

// Has reports whether an item has key.
func (h *keyedHeap[T]) Has(key string) bool {
	_, ok := h.data.index[key]
	return ok
}

// Delete removes the item with key; false if there was none.
func (h *keyedHeap[T]) Delete(key string) bool {
	i, ok := h.data.index[key]
	if ok {
		heap.Remove(&h.data, i)
	}
	return ok
}

// Peek returns the first item without removing it.
func (h *keyedHeap[T]) Peek() (T, bool) {
	if len(h.data.items) == 0 {
		var zero T
		return zero, false
	}
	return h.data.items[0], true
}

// Pop removes and returns the first item.
func (h *keyedHeap[T]) Pop() (T, bool) {
	if len(h.data.items) == 0 {
		var zero T
		return zero, false
	}
	return heap.Pop(&h.data).(T), true
}

// Len is the number of items.
func (h *keyedHeap[T]) Len() int { return len(h.data.items) }

// heapData implements container/heap.Interface and keeps index current.
type heapData[T any] struct {
	items []T
	index map[string]int // key → position in items
	keyOf func(T) string
	less  func(a, b T) bool
}

func (d *heapData[T]) Len() int           { return len(d.items) }
func (d *heapData[T]) Less(i, j int) bool { return d.less(d.items[i], d.items[j]) }

func (d *heapData[T]) Swap(i, j int) {
	d.items[i], d.items[j] = d.items[j], d.items[i]
	d.index[d.keyOf(d.items[i])] = i
	d.index[d.keyOf(d.items[j])] = j
}

func (d *heapData[T]) Push(x any) {
	item := x.(T)
	d.index[d.keyOf(item)] = len(d.items)
	d.items = append(d.items, item)
}

func (d *heapData[T]) Pop() any {
	last := len(d.items) - 1
	item := d.items[last]
	var zero T
	d.items[last] = zero
	d.items = d.items[:last]
	delete(d.index, d.keyOf(item))
	return item
}

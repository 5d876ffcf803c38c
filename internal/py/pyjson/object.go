package pyjson

// Object is a JSON object that keeps its keys in order, as a Python dict
// does: setting an existing key replaces its value in place, a new key goes
// last. Values are held already encoded.
type Object struct {
	keys []string
	vals [][]byte
}

// Set sets key to the encoded value val.
func (o *Object) Set(key string, val []byte) {
	for i, k := range o.keys {
		if k == key {
			o.vals[i] = val
			return
		}
	}
	o.keys = append(o.keys, key)
	o.vals = append(o.vals, val)
}

// Get returns the encoded value of key.
func (o *Object) Get(key string) ([]byte, bool) {
	for i, k := range o.keys {
		if k == key {
			return o.vals[i], true
		}
	}
	return nil, false
}

// Has reports whether key is set.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Delete removes key, if set.
func (o *Object) Delete(key string) {
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			o.vals = append(o.vals[:i], o.vals[i+1:]...)
			return
		}
	}
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Keys returns the keys in order.
func (o *Object) Keys() []string { return o.keys }

// Update sets every key of other, in its order ({**o, **other}).
func (o *Object) Update(other *Object) {
	if other == nil {
		return
	}
	for i, k := range other.keys {
		o.Set(k, other.vals[i])
	}
}

// Clone returns a copy that can be changed without touching o. Values are
// shared: they are never modified in place.
func (o *Object) Clone() *Object {
	if o == nil {
		return &Object{}
	}
	return &Object{keys: append([]string(nil), o.keys...), vals: append([][]byte(nil), o.vals...)}
}

// Append appends the object as json.dumps writes it.
func (o *Object) Append(dst []byte) []byte {
	dst = append(dst, '{')
	for i, k := range o.keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = AppendString(dst, k)
		dst = append(dst, ": "...)
		dst = append(dst, o.vals[i]...)
	}
	return append(dst, '}')
}

// Bytes is Append(nil).
func (o *Object) Bytes() []byte { return o.Append(nil) }

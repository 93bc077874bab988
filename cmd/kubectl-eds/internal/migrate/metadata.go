package migrate

// metadataShape keeps what the author of a manifest writes and leaves out
// what the API server and controllers write: the migrated object is a new
// object, and they write their own.
var metadataShape = shape{
	"name":        kept,
	"namespace":   kept,
	"labels":      kept,
	"annotations": kept,

	"uid":                        serverSet,
	"resourceVersion":            serverSet,
	"creationTimestamp":          serverSet,
	"generation":                 serverSet,
	"managedFields":              serverSet,
	"selfLink":                   serverSet,
	"deletionTimestamp":          serverSet,
	"deletionGracePeriodSeconds": serverSet,

	"generateName":    dropped("metadata.name names the object"),
	"ownerReferences": dropped("the new object would be garbage-collected with the owner of the old one; the tool that owned it should create the ExtendedDaemonSet instead"),
	"finalizers":      dropped("they belong to controllers of the old object, which would never remove them from the new one"),
}

// metadata maps the source's metadata; annotations then go through rename,
// which returns the key to write, or "" to leave the annotation out (after
// warning, when it is not obvious why).
func (m *migration) metadata(src map[string]any, rename func(key string, value any) string) map[string]any {
	meta := m.reshape("metadata", m.object("metadata", src["metadata"]), metadataShape)
	annotations := m.object("metadata.annotations", meta["annotations"])
	if annotations == nil {
		return meta
	}
	out := map[string]any{}
	for _, key := range sortedKeys(annotations) {
		if key == lastAppliedConfig {
			// kubectl writes it on apply, for the object it applied.
			continue
		}
		if to := rename(key, annotations[key]); to != "" {
			out[to] = annotations[key]
		}
	}
	delete(meta, "annotations")
	if len(out) > 0 {
		meta["annotations"] = out
	}
	return meta
}

// dropTemplateTimestamp leaves out the creationTimestamp: null that
// clients print in the metadata of every pod template they read.
func dropTemplateTimestamp(spec map[string]any) {
	if meta, ok := getPath(spec, "template", "metadata").(map[string]any); ok {
		if value, present := meta["creationTimestamp"]; present && value == nil {
			delete(meta, "creationTimestamp")
		}
	}
}

// setAnnotation writes an annotation of ours on the migrated object.
func setAnnotation(obj map[string]any, key, value string) {
	setPath(obj, value, "metadata", "annotations", key)
}

package control

import (
	"encoding/json"
	"errors"
	"fmt"

	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// metadataAnswer is the Accept header of the writes whose answer the
// controller needs little of: the API server answers with the object's
// metadata alone (PartialObjectMetadata: protobuf, or JSON), for built-in
// and custom resources alike. Of a Job just created or a status just
// written, a sync needs only what the server set (UID, resourceVersion,
// creationTimestamp); the rest is what it sent. Decoding the whole object
// was a large part of the controller's CPU per firing, and encoding it
// part of the API server's (docs/benchmarks.md). The last entry takes the
// whole object in JSON from a server that does not offer the metadata.
const metadataAnswer = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1," +
	"application/json"

// restClientOf returns the REST client behind a generated typed client,
// nil behind a fake one (whose RESTClient is a nil *rest.RESTClient): the
// writes then go through the typed client, as the fake tracks them.
func restClientOf(c rest.Interface) *rest.RESTClient {
	rc, _ := c.(*rest.RESTClient)
	return rc
}

// answeredMetadata returns the metadata the API server answered a write
// with. A refused write's error is the server's Status, as a typed client
// gives it (Result.Error decodes it; Raw would not).
func answeredMetadata(res rest.Result) (*metav1.ObjectMeta, error) {
	if err := res.Error(); err != nil {
		return nil, err
	}
	body, err := res.Raw()
	if err != nil {
		return nil, err
	}
	obj, _, decodeErr := metainternalversionscheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if partial, ok := obj.(*metav1.PartialObjectMetadata); ok && decodeErr == nil {
		if partial.UID == "" {
			return nil, errors.New("the API server's answer to a write names no UID")
		}
		return &partial.ObjectMeta, nil
	}
	// The whole object in JSON: its metadata is all that is read.
	var whole metav1.PartialObjectMetadata
	if jsonErr := json.Unmarshal(body, &whole); jsonErr != nil || whole.UID == "" {
		return nil, fmt.Errorf("reading the metadata of the API server's answer: %w", errors.Join(decodeErr, jsonErr, errors.New("no UID")))
	}
	return &whole.ObjectMeta, nil
}

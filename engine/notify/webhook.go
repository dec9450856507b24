package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Headers of a webhook delivery.
const (
	// SignatureHeader carries "sha256=" and the lower-case hex HMAC-SHA256 of the request
	// body's exact bytes, keyed with the sink's secret (as GitHub's X-Hub-Signature-256).
	SignatureHeader = "X-Mcp-Scheduler-Signature-256"
	// EventHeader carries the message type; DeliveryHeader the message id (Message.ID).
	EventHeader    = "X-Mcp-Scheduler-Event"
	DeliveryHeader = "X-Mcp-Scheduler-Delivery"
)

// Sign returns the SignatureHeader value of body under secret.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// shownURL is a webhook's URL as logs and doctor show it: scheme and host only, since the
// path or query of many webhook URLs is their secret (Slack, Discord).
func shownURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(an invalid URL)"
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return u.Scheme + "://" + u.Host + "/…"
	}
	return u.Scheme + "://" + u.Host
}

// permanentError is a delivery the receiver refused for good (a 4xx other than 408, 425 and
// 429): retrying sends the same request again, so the notice is given up at once.
type permanentError struct{ error }

// postWebhook POSTs body to s.Webhook within ctx. A 2xx answer is a delivery; anything else
// is an error naming the status and the start of the answer.
func postWebhook(ctx context.Context, client *http.Client, s Sink, typ, id string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Webhook, bytes.NewReader(body))
	if err != nil {
		return permanentError{fmt.Errorf("webhook %s: %w", shownURL(s.Webhook), err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcp-scheduler-notify")
	req.Header.Set(EventHeader, typ)
	req.Header.Set(DeliveryHeader, id)
	if s.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(s.Secret, body))
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the whole URL
		}
		return fmt.Errorf("webhook %s: %w", shownURL(s.Webhook), err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 300)) // only for the error message
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	err = fmt.Errorf("webhook %s answered %s: %s", shownURL(s.Webhook), resp.Status, strings.TrimSpace(string(answer)))
	switch c := resp.StatusCode; {
	case c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooEarly && c != http.StatusTooManyRequests:
		return permanentError{err}
	}
	return err
}

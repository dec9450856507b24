package dashboard

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

// web holds every asset the pages use: no request leaves for another host.
//
//go:embed web/index.html web/login.html web/app.js web/graph.js web/shown.js web/style.css web/vendor/dagre.esm.js
var web embed.FS

var loginTmpl = template.Must(template.ParseFS(web, "web/login.html"))

// assets serves /assets/NAME from web/NAME (immutable within a build, so cached briefly).
func (h *Handler) assets() http.Handler {
	sub, err := fs.Sub(web, "web")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	files := http.StripPrefix("/assets/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

func (h *Handler) index(w http.ResponseWriter, _ *http.Request) {
	b, err := web.ReadFile("web/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b) // a write error means the browser went away
}

func writeLogin(w http.ResponseWriter, status int, problem string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = loginTmpl.Execute(w, struct{ Problem string }{problem}) // a write error means the browser went away
}

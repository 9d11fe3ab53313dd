package catalog

import (
	"context"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mkube/mkube/images/lib"
	"github.com/mkube/mkube/images/shell"
)

// The servers' programs print, on the streams the real images use, the
// lines a `kubectl logs` of them shows, with each server's own timestamp
// format in UTC (a container's TZ), and shut down as each does on its
// image's STOPSIGNAL. An entrypoint script ends with `exec "$@"`, which
// here is p.Exec: the command's exit code, kill or OOM kill is the
// container's.

const nginxVersion = "1.27.3"

func nginxImage() Image {
	return Image{
		Entrypoint: []string{"/docker-entrypoint.sh"},
		Cmd:        []string{"nginx", "-g", "daemon off;"},
		Env: []string{"PATH=" + stdPath, "NGINX_VERSION=" + nginxVersion, "NJS_VERSION=0.8.7",
			"NJS_RELEASE=1~bookworm", "PKG_RELEASE=1~bookworm", "DYNPKG_RELEASE=1~bookworm"},
		Ports:      []int32{80},
		StopSignal: "SIGQUIT",
		Files: map[string]string{
			"/etc/nginx/nginx.conf": `user  nginx;
worker_processes  auto;

error_log  /var/log/nginx/error.log notice;
pid        /var/run/nginx.pid;

events {
    worker_connections  1024;
}

http {
    include       /etc/nginx/mime.types;
    default_type  application/octet-stream;

    log_format  main  '$remote_addr - $remote_user [$time_local] "$request" '
                      '$status $body_bytes_sent "$http_referer" '
                      '"$http_user_agent" "$http_x_forwarded_for"';

    access_log  /var/log/nginx/access.log  main;

    sendfile        on;
    keepalive_timeout  65;
    include /etc/nginx/conf.d/*.conf;
}
`,
			"/etc/nginx/conf.d/default.conf": `server {
    listen       80;
    listen  [::]:80;
    server_name  localhost;

    location / {
        root   /usr/share/nginx/html;
        index  index.html index.htm;
    }
}
`,
			"/usr/share/nginx/html/index.html": `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto;
font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and
working. Further configuration is required.</p>

<p>For online documentation and support please refer to
<a href="http://nginx.org/">nginx.org</a>.<br/>
Commercial support is available at
<a href="http://nginx.com/">nginx.com</a>.</p>

<p><em>Thank you for using nginx.</em></p>
</body>
</html>
`,
		},
		Programs: map[string]shell.Program{"docker-entrypoint.sh": nginxEntrypoint, "nginx": nginx, "nginx-debug": nginx},
		Serve:    nginxSite.serve,
	}
}

// nginxEntrypoint is the image's /docker-entrypoint.sh: it configures (and
// says so, on stdout, unless NGINX_ENTRYPOINT_QUIET_LOGS) only when the
// command is nginx; any other command runs as it is.
func nginxEntrypoint(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	if len(args) > 0 && (args[0] == "nginx" || args[0] == "nginx-debug") && p.Getenv("NGINX_ENTRYPOINT_QUIET_LOGS") == "" {
		const me = "/docker-entrypoint.sh: "
		fmt.Fprint(out, me+"/docker-entrypoint.d/ is not empty, will attempt to perform configuration\n",
			me+"Looking for shell scripts in /docker-entrypoint.d/\n",
			me+"Launching /docker-entrypoint.d/10-listen-on-ipv6-by-default.sh\n",
			"10-listen-on-ipv6-by-default.sh: info: Getting the checksum of /etc/nginx/conf.d/default.conf\n",
			"10-listen-on-ipv6-by-default.sh: info: Enabled listen on IPv6 in /etc/nginx/conf.d/default.conf\n",
			me+"Sourcing /docker-entrypoint.d/15-local-resolvers.envsh\n",
			me+"Launching /docker-entrypoint.d/20-envsubst-on-templates.sh\n",
			me+"Launching /docker-entrypoint.d/30-tune-worker-processes.sh\n",
			me+"Configuration complete; ready for start up\n")
	}
	return p.Exec(ctx, args)
}

var listenDirective = regexp.MustCompile(`(?m)^\s*listen\s+(?:[^\s;]*:)?(\d+)`)

// nginxPorts are the ports the configuration's listen directives name, so
// that a ConfigMap mounted over conf.d/default.conf with `listen 8080;`
// moves the server as it would the real one.
func nginxPorts(fs *shell.FS) []int32 {
	var ports []int32
	files := []string{"/etc/nginx/nginx.conf"}
	names, _ := fs.List("/etc/nginx/conf.d")
	for _, n := range names {
		if strings.HasSuffix(n, ".conf") {
			files = append(files, path.Join("/etc/nginx/conf.d", n))
		}
	}
	for _, f := range files {
		data, _ := fs.ReadFile(f)
		for _, m := range listenDirective.FindAllStringSubmatch(string(data), -1) {
			if n, err := strconv.Atoi(m[1]); err == nil && !slices.Contains(ports, int32(n)) {
				ports = append(ports, int32(n))
			}
		}
	}
	return ports
}

// nginx logs its notices to the error log, which the image links to
// /dev/stderr. Without `daemon off;` the master forks to the background
// and the foreground process exits 0, so the container completes: the
// well-known pitfall of `command: ["nginx"]`.
func nginx(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	switch {
	case slices.Contains(args, "-v"):
		fmt.Fprintln(p.Stderr, "nginx version: nginx/"+nginxVersion)
		return 0, nil
	case slices.Contains(args, "-t"):
		fmt.Fprint(p.Stderr, "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n",
			"nginx: configuration file /etc/nginx/nginx.conf test is successful\n")
		return 0, nil
	case !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "daemon off") }):
		return 0, nil
	}
	log := func(pid int, msg string) {
		fmt.Fprintf(p.Stderr, "%s [notice] %d#%d: %s\n", p.Clock.Now().UTC().Format("2006/01/02 15:04:05"), pid, pid, msg)
	}
	log(1, `using the "epoll" event method`)
	log(1, "nginx/"+nginxVersion)
	log(1, "built by gcc 12.2.0 (Debian 12.2.0-14)")
	log(1, "OS: Linux 6.8.0-mkube")
	log(1, "getrlimit(RLIMIT_NOFILE): 1048576:1048576")
	log(1, "start worker processes")
	log(1, "start worker process 29")
	if err := lib.ListenUntilStopped(ctx, p, nginxPorts(p.FS)...); err != nil {
		return 137, err
	}
	// SIGQUIT is nginx's graceful shutdown: the worker finishes, then the master exits.
	log(1, "signal 3 (SIGQUIT) received, shutting down")
	log(29, "gracefully shutting down")
	log(29, "exiting")
	log(29, "exit")
	log(1, "signal 17 (SIGCHLD) received from 29")
	log(1, "worker process 29 exited with code 0")
	log(1, "exit")
	return 0, nil
}

func httpdImage() Image {
	return Image{
		Cmd:        []string{"httpd-foreground"},
		Env:        []string{"PATH=/usr/local/apache2/bin:" + stdPath, "HTTPD_PREFIX=/usr/local/apache2", "HTTPD_VERSION=2.4.62"},
		WorkingDir: "/usr/local/apache2",
		Ports:      []int32{80},
		StopSignal: "SIGWINCH",
		Files:      map[string]string{"/usr/local/apache2/htdocs/index.html": "<html><body><h1>It works!</h1></body></html>\n"},
		Programs: map[string]shell.Program{
			// httpd-foreground is `exec httpd -DFOREGROUND "$@"`.
			"httpd-foreground": func(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
				return p.Exec(ctx, append([]string{"httpd", "-DFOREGROUND"}, args...))
			},
			"httpd": httpd,
		},
		Serve: httpdSite.serve,
	}
}

// httpd warns, twice (the config is read twice), that the host name does
// not resolve to a FQDN, naming the Pod's IP as /etc/hosts has it, and
// logs to stderr. Without -DFOREGROUND it daemonizes, and the container
// exits 0. SIGWINCH, the image's STOPSIGNAL, is its graceful stop.
func httpd(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
	ip := "127.0.0.1"
	if data, err := p.FS.ReadFile("/etc/hosts"); err == nil && p.Hostname != "" {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 1 && slices.Contains(f[1:], p.Hostname) {
				ip = f[0]
			}
		}
	}
	for range 2 {
		fmt.Fprintf(p.Stderr, "AH00558: httpd: Could not reliably determine the server's fully qualified domain name, using %s. Set the 'ServerName' directive globally to suppress this message\n", ip)
	}
	if !slices.Contains(args, "-DFOREGROUND") {
		return 0, nil
	}
	log := func(module, msg string) {
		fmt.Fprintf(p.Stderr, "[%s] [%s] [pid 1:tid 140245036013440] %s\n",
			p.Clock.Now().UTC().Format("Mon Jan 02 15:04:05.000000 2006"), module, msg)
	}
	log("mpm_event:notice", "AH00489: Apache/2.4.62 (Unix) configured -- resuming normal operations")
	log("core:notice", "AH00094: Command line: 'httpd -D FOREGROUND'")
	if err := lib.ListenUntilStopped(ctx, p, 80); err != nil {
		return 137, err
	}
	log("mpm_event:notice", "AH00492: caught SIGWINCH, shutting down gracefully")
	return 0, nil
}

func redisImage() Image {
	return Image{
		Entrypoint: []string{"docker-entrypoint.sh"},
		Cmd:        []string{"redis-server"},
		Env: []string{"PATH=" + stdPath, "GOSU_VERSION=1.17", "REDIS_VERSION=7.4.1",
			"REDIS_DOWNLOAD_URL=http://download.redis.io/releases/redis-7.4.1.tar.gz"},
		WorkingDir: "/data",
		Ports:      []int32{6379},
		Programs: map[string]shell.Program{
			// The entrypoint turns `redis-server` flags or a .conf given
			// alone into a redis-server command, drops root (silently),
			// and execs.
			"docker-entrypoint.sh": func(ctx context.Context, p *shell.Process, args []string, _ io.Writer) (int, error) {
				if len(args) > 0 && (strings.HasPrefix(args[0], "-") || strings.HasSuffix(args[0], ".conf")) {
					args = append([]string{"redis-server"}, args...)
				}
				return p.Exec(ctx, args)
			},
			"redis-server": redisServer,
		},
		Serve: redisPing,
	}
}

// redisServer logs to stdout, as redis does with no logfile: "1:C" lines
// are from before it knows its role, "1:M" from the master. On SIGTERM it
// saves the RDB snapshot (to /data, the volume's usual mount) and exits 0.
func redisServer(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	port := int32(6379)
	for i, a := range args {
		if a == "--port" && i+1 < len(args) {
			if n, err := strconv.Atoi(args[i+1]); err == nil {
				port = int32(n)
			}
		}
	}
	log := func(role, level, msg string) {
		fmt.Fprintf(out, "1:%s %s %s %s\n", role, p.Clock.Now().UTC().Format("02 Jan 2006 15:04:05.000"), level, msg)
	}
	log("C", "*", "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")
	log("C", "*", "Redis version=7.4.1, bits=64, commit=00000000, modified=0, pid=1, just started")
	if len(args) == 0 || !strings.HasSuffix(args[0], ".conf") {
		log("C", "#", "Warning: no config file specified, using the default config. In order to specify a config file use redis-server /path/to/redis.conf")
	}
	log("M", "*", "monotonic clock: POSIX clock_gettime")
	log("M", "*", fmt.Sprintf("Running mode=standalone, port=%d.", port))
	log("M", "*", "Server initialized")
	log("M", "*", "Ready to accept connections tcp")
	if err := lib.ListenUntilStopped(ctx, p, port); err != nil {
		return 137, err
	}
	fmt.Fprintf(out, "1:signal-handler (%d) Received SIGTERM scheduling shutdown...\n", p.Clock.Now().Unix())
	log("M", "*", "User requested shutdown...")
	log("M", "*", "Saving the final RDB snapshot before exiting.")
	p.FS.WriteFile("/data/dump.rdb", []byte("REDIS0012"))
	log("M", "*", "DB saved on disk")
	log("M", "#", "Redis is now ready to exit, bye bye...")
	return 0, nil
}

const mysqlVersion = "8.4.3"

func mysqlImage() Image {
	return Image{
		Entrypoint: []string{"docker-entrypoint.sh"},
		Cmd:        []string{"mysqld"},
		Env: []string{"PATH=" + stdPath, "GOSU_VERSION=1.17", "MYSQL_MAJOR=8.4",
			"MYSQL_VERSION=" + mysqlVersion + "-1.el9", "MYSQL_SHELL_VERSION=" + mysqlVersion + "-1.el9"},
		Ports:    []int32{3306, 33060},
		Programs: map[string]shell.Program{"docker-entrypoint.sh": mysqlEntrypoint, "mysqld": mysqld},
		Serve:    holdTCP,
	}
}

// mysqlEntrypoint is the image's entrypoint: its notes go to stdout, its
// warnings and errors to stderr, stamped by `date --rfc-3339=seconds`. It
// logs "started" twice because it re-executes itself as the mysql user.
// An uninitialized data directory needs a root password option, or the
// container fails with exit 1 (CrashLoopBackOff); once initialized (the
// directory /var/lib/mysql/mysql exists, as on a kept volume) it does not
// ask again.
func mysqlEntrypoint(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = append([]string{"mysqld"}, args...)
	}
	if len(args) == 0 || args[0] != "mysqld" || slices.Contains(args, "--help") || slices.Contains(args, "--version") {
		return p.Exec(ctx, args)
	}
	log := func(w io.Writer, level, msg string) {
		fmt.Fprintf(w, "%s [%s] [Entrypoint]: %s\n", p.Clock.Now().UTC().Format("2006-01-02 15:04:05-07:00"), level, msg)
	}
	started := "Entrypoint script for MySQL Server " + mysqlVersion + "-1.el9 started."
	log(out, "Note", started)
	log(out, "Note", "Switching to dedicated user 'mysql'")
	log(out, "Note", started)
	if initialized, _ := p.FS.Stat("/var/lib/mysql/mysql"); !initialized {
		if fileEnv(p, "MYSQL_ROOT_PASSWORD") == "" && p.Getenv("MYSQL_ALLOW_EMPTY_PASSWORD") == "" && p.Getenv("MYSQL_RANDOM_ROOT_PASSWORD") == "" {
			log(p.Stderr, "ERROR", "Database is uninitialized and password option is not specified")
			fmt.Fprint(p.Stderr, "    You need to specify one of the following as an environment variable:\n",
				"    - MYSQL_ROOT_PASSWORD\n    - MYSQL_ALLOW_EMPTY_PASSWORD\n    - MYSQL_RANDOM_ROOT_PASSWORD\n")
			return 1, nil
		}
		log(out, "Note", "Initializing database files")
		p.FS.Mkdir("/var/lib/mysql/mysql", true)
		log(out, "Note", "Database files initialized")
		log(out, "Note", "Starting temporary server")
		log(out, "Note", "Temporary server started.")
		if db := fileEnv(p, "MYSQL_DATABASE"); db != "" {
			log(out, "Note", "Creating database "+db)
		}
		if user := fileEnv(p, "MYSQL_USER"); user != "" && fileEnv(p, "MYSQL_PASSWORD") != "" {
			log(out, "Note", "Creating user "+user)
		}
		log(out, "Note", "Stopping temporary server")
		log(out, "Note", "Temporary server stopped")
		fmt.Fprintln(out)
		log(out, "Note", "MySQL init process done. Ready for start up.")
		fmt.Fprintln(out)
	}
	return p.Exec(ctx, args)
}

// mysqld logs to stderr (the image's log_error). The X Plugin is ready
// before the classic protocol. SIGTERM is a clean shutdown: exit 0.
func mysqld(ctx context.Context, p *shell.Process, _ []string, _ io.Writer) (int, error) {
	log := func(thread int, code, subsystem, msg string) {
		fmt.Fprintf(p.Stderr, "%s %d [System] [%s] [%s] %s\n", p.Clock.Now().UTC().Format("2006-01-02T15:04:05.000000Z"), thread, code, subsystem, msg)
	}
	log(0, "MY-015015", "Server", "MySQL Server - start.")
	log(0, "MY-010116", "Server", "/usr/sbin/mysqld (mysqld "+mysqlVersion+") starting as process 1")
	log(1, "MY-013576", "InnoDB", "InnoDB initialization has started.")
	log(1, "MY-013577", "InnoDB", "InnoDB initialization has ended.")
	log(0, "MY-011323", "Server", "X Plugin ready for connections. Bind-address: '::' port: 33060, socket: /var/run/mysqld/mysqlx.sock")
	log(0, "MY-010931", "Server", "/usr/sbin/mysqld: ready for connections. Version: '"+mysqlVersion+"'  socket: '/var/run/mysqld/mysqld.sock'  port: 3306  MySQL Community Server - GPL.")
	if err := lib.ListenUntilStopped(ctx, p, 3306, 33060); err != nil {
		return 137, err
	}
	log(0, "MY-013172", "Server", "Received SHUTDOWN from user <via user signal>. Shutting down mysqld (Version: "+mysqlVersion+").")
	log(0, "MY-010910", "Server", "/usr/sbin/mysqld: Shutdown complete (mysqld "+mysqlVersion+")  MySQL Community Server - GPL.")
	return 0, nil
}

func postgresImage() Image {
	return Image{
		Entrypoint: []string{"docker-entrypoint.sh"},
		Cmd:        []string{"postgres"},
		Env: []string{"PATH=" + stdPath + ":/usr/lib/postgresql/17/bin", "GOSU_VERSION=1.17", "LANG=en_US.utf8",
			"PG_MAJOR=17", "PG_VERSION=17.2-1.pgdg120+1", "PGDATA=/var/lib/postgresql/data"},
		Ports:      []int32{5432},
		StopSignal: "SIGINT",
		Programs:   map[string]shell.Program{"docker-entrypoint.sh": postgresEntrypoint, "postgres": postgres},
		Serve:      holdTCP,
	}
}

// postgresEntrypoint refuses an uninitialized $PGDATA without
// POSTGRES_PASSWORD (or POSTGRES_HOST_AUTH_METHOD=trust), on stderr, exit
// 1; else initdb's output goes to stdout, and PG_VERSION marks the data
// directory initialized.
func postgresEntrypoint(ctx context.Context, p *shell.Process, args []string, out io.Writer) (int, error) {
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = append([]string{"postgres"}, args...)
	}
	pgdata := p.Getenv("PGDATA")
	if len(args) == 0 || args[0] != "postgres" {
		return p.Exec(ctx, args)
	}
	if initialized, _ := p.FS.Stat(pgdata + "/PG_VERSION"); !initialized {
		if fileEnv(p, "POSTGRES_PASSWORD") == "" && p.Getenv("POSTGRES_HOST_AUTH_METHOD") != "trust" {
			fmt.Fprint(p.Stderr, `Error: Database is uninitialized and superuser password is not specified.
       You must specify POSTGRES_PASSWORD to a non-empty value for the
       superuser. For example, "-e POSTGRES_PASSWORD=password" on "docker run".

       You may also use "POSTGRES_HOST_AUTH_METHOD=trust" to allow all
       connections without a password. This is *not* recommended.

       See PostgreSQL documentation about "trust":
       https://www.postgresql.org/docs/current/auth-trust.html
`)
			return 1, nil
		}
		fmt.Fprintf(out, `The files belonging to this database system will be owned by user "postgres".
This user must also own the server process.

fixing permissions on existing directory %[1]s ... ok
creating subdirectories ... ok
running bootstrap script ... ok
performing post-bootstrap initialization ... ok
syncing data to disk ... ok

Success. You can now start the database server using:

    pg_ctl -D %[1]s -l logfile start

PostgreSQL init process complete; ready for start up.

`, pgdata)
		p.FS.WriteFile(pgdata+"/PG_VERSION", []byte("17\n"))
	}
	return p.Exec(ctx, args)
}

// postgres logs to stderr. SIGINT, the image's STOPSIGNAL, is its fast
// shutdown: exit 0.
func postgres(ctx context.Context, p *shell.Process, _ []string, _ io.Writer) (int, error) {
	log := func(pid int, msg string) {
		fmt.Fprintf(p.Stderr, "%s UTC [%d] LOG:  %s\n", p.Clock.Now().UTC().Format("2006-01-02 15:04:05.000"), pid, msg)
	}
	log(1, "starting PostgreSQL 17.2 (Debian 17.2-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit")
	log(1, `listening on IPv4 address "0.0.0.0", port 5432`)
	log(1, `listening on IPv6 address "::", port 5432`)
	log(1, `listening on Unix socket "/var/run/postgresql/.s.PGSQL.5432"`)
	log(1, "database system is ready to accept connections")
	if err := lib.ListenUntilStopped(ctx, p, 5432); err != nil {
		return 137, err
	}
	log(1, "received fast shutdown request")
	log(1, "aborting any active transactions")
	log(63, "shutting down")
	log(1, "database system is shut down")
	return 0, nil
}

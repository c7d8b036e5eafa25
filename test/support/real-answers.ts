/**
 * Answers shaped like real ones to questions about Rust, C++, Ruby and Python repositories (issue 33): lists of
 * `Type::method`, code spans with `:`, `*`, `_`, `|` and backticks, nested lists, tables with long cells, quotes and
 * headings. Each comes with the code spans that must show exactly as written.
 */
export interface RealAnswer {
  language: string;
  markdown: string;
  /** Text that must appear on the screen exactly (a code span's content). */
  exact: string[];
}

export const REAL_ANSWERS: RealAnswer[] = [
  {
    language: 'Rust',
    markdown: [
      '## How `App::run` drives `World::update`',
      '',
      'The runner is set in `App::set_runner` and called from `App::run`:',
      '',
      '- `App::run` takes the app with `core::mem::replace` and calls the runner (crates/bevy_app/src/app.rs:871)',
      '- `ScheduleRunnerPlugin::build` installs a loop that calls `App::update` each tick',
      '  - `SubApps::update` runs `Main` then each sub-app\'s `extract`',
      '  - `World::increment_change_tick` bumps the tick: `fn increment_change_tick(&self) -> Tick`',
      '- `impl<T: Resource> FromWorld for T` lets `init_resource::<T>()` build it',
      '',
      '> `Plugin::build` runs once; `Plugin::finish` runs after every plugin is built.',
      '',
      '| Item | Where | What it does |',
      '|---|---|---|',
      '| `App::run` | `crates/bevy_app/src/app.rs:871` | takes the app out of `&mut self` and hands it to the runner closure set by `set_runner` |',
      '| `World::update` | `crates/bevy_ecs/src/world/mod.rs:2104` | runs the `Main` schedule and then clears the trackers of removed components |',
      '| `Res<T>` | `crates/bevy_ecs/src/change_detection.rs` | a shared borrow of a resource, `*res` derefs to `&T` |',
    ].join('\n'),
    exact: ['App::run', 'World::update', 'core::mem::replace', 'ScheduleRunnerPlugin::build', 'SubApps::update', 'fn increment_change_tick(&self) -> Tick', 'impl<T: Resource> FromWorld for T', 'init_resource::<T>()', 'Plugin::build', 'Plugin::finish', 'App::set_runner'],
  },
  {
    language: 'C++',
    markdown: [
      '### `std::vector<T>::push_back` in this tree',
      '',
      '1. `Buffer::append(const char* data, size_t n)` grows via `std::vector<char>::reserve` (src/buffer.cc:42)',
      '2. `Buffer::operator[](size_t i)` is unchecked; `Buffer::at(size_t)` throws `std::out_of_range`',
      '   1. `detail::grow_policy::next(size_t cur) -> size_t` doubles: `cur * 2`',
      '   2. `static_cast<int*>(p)` appears in `Buffer::data()`',
      '3. `a || b` short-circuits in `Buffer::empty() const`',
      '',
      '| Function | Complexity | Notes |',
      '|---|---|---|',
      '| `Buffer::append` | amortised O(1) | calls `std::vector<char>::insert(end(), data, data + n)` |',
      '| `Buffer::clear` | O(1) | keeps capacity; `shrink_to_fit()` is never called |',
    ].join('\n'),
    exact: ['std::vector<T>::push_back', 'Buffer::append(const char* data, size_t n)', 'std::vector<char>::reserve', 'Buffer::operator[](size_t i)', 'std::out_of_range', 'detail::grow_policy::next(size_t cur) -> size_t', 'cur * 2', 'static_cast<int*>(p)', 'a || b', 'Buffer::empty() const'],
  },
  {
    language: 'Ruby',
    markdown: [
      'Routing goes through `ActionDispatch::Routing::RouteSet#call`:',
      '',
      '* `Rails::Engine.call(env)` builds the app once (railties/lib/rails/engine.rb:532)',
      '* `ActionDispatch::Journey::Router#serve` matches `env["PATH_INFO"]`',
      '  * a symbol key like `:controller` or `:action` picks the target',
      '  * `defaults: { format: :json }` sets the format',
      '* `__send__(:process, name)` dispatches to the action',
      '',
      '> `Module#prepend` puts `ActionController::Instrumentation` before the controller.',
    ].join('\n'),
    exact: ['ActionDispatch::Routing::RouteSet#call', 'Rails::Engine.call(env)', 'ActionDispatch::Journey::Router#serve', 'env["PATH_INFO"]', ':controller', ':action', 'defaults: { format: :json }', '__send__(:process, name)', 'Module#prepend', 'ActionController::Instrumentation'],
  },
  {
    language: 'Python',
    markdown: [
      '#### `Flask.__call__` → `Flask.wsgi_app`',
      '',
      '- `Flask.__call__(self, environ, start_response)` calls `self.wsgi_app(environ, start_response)` (src/flask/app.py:1498)',
      '- `ctx.push()` binds `_cv_app` and `_cv_request`; `**kwargs` go to `RequestContext.__init__`',
      '  - `dict[str, t.Any] | None` is the type of `view_args`',
      '  - ``` `backticks` ``` inside code: `` a `b` c ``',
      '- `__init__.py` re-exports `Flask` with `from .app import Flask as Flask`',
      '',
      '| Name | Type | Default |',
      '|---|---|---|',
      '| `SECRET_KEY` | `str \\| bytes \\| None` | `None` |',
      '| `PERMANENT_SESSION_LIFETIME` | `timedelta` | `timedelta(days=31)` |',
    ].join('\n'),
    exact: ['Flask.__call__', 'Flask.wsgi_app', 'Flask.__call__(self, environ, start_response)', 'self.wsgi_app(environ, start_response)', '_cv_app', '**kwargs', 'RequestContext.__init__', 'dict[str, t.Any] | None', '`backticks`', 'a `b` c', '__init__.py', 'from .app import Flask as Flask', 'str | bytes | None', 'timedelta(days=31)'],
  },
];

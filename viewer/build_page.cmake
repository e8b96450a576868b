# Builds the page of `nestsim view` (cmake -P, run by the nestsim_viewer target):
# npm ci from package-lock.json into NPM_DIR, then esbuild's bundle and the static files
# into DIST_DIR. The page needs node, npm and the npm registry (or npm's cache); the
# engine needs none of them, so a page that cannot be built is not an error of the
# build: it prints one line saying why and how to build it later, and leaves DIST_DIR
# without index.html, which `nestsim view` and the browser tests look for.
#
#   cmake -DSOURCE_DIR=viewer -DNPM_DIR=... -DDIST_DIR=... -DBUILD_DIR=... -P build_page.cmake
foreach(v SOURCE_DIR NPM_DIR DIST_DIR BUILD_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "build_page.cmake: ${v} is not set")
  endif()
endforeach()

set(later "build it later with `cmake --build ${BUILD_DIR} --target nestsim_viewer`")

# The page's index.html is written last: its presence means a whole page.
file(REMOVE ${DIST_DIR}/index.html)

find_program(npm npm)
find_program(node node)
if(NOT npm OR NOT node)
  message("nestsim: the page of `nestsim view` is not built: node or npm is missing; "
          "install them (apt-get install nodejs npm), then ${later}")
  return()
endif()

# npm ci again only when the lock file changed (it empties node_modules first).
set(rc 0)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${SOURCE_DIR}/package-lock.json
                        ${NPM_DIR}/package-lock.json RESULT_VARIABLE lock_changed)
if(lock_changed OR NOT EXISTS ${NPM_DIR}/node_modules/.package-lock.json)
  file(MAKE_DIRECTORY ${NPM_DIR})
  file(COPY ${SOURCE_DIR}/package.json ${SOURCE_DIR}/package-lock.json DESTINATION ${NPM_DIR})
  # npm ci from the local cache first; one retry: an unreachable registry (offline nodes,
  # proxies with their own certificates) fails in seconds, not minutes. engine-strict: a
  # package that needs a newer node than this one (Debian 12's is 18) is an error here,
  # not a warning hidden by --loglevel=error and a failure later.
  execute_process(
    COMMAND ${npm} ci --prefer-offline --no-audit --no-fund --loglevel=error --engine-strict
            --fetch-retries=1 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000
    WORKING_DIRECTORY ${NPM_DIR}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
endif()
if(NOT rc EQUAL 0)
  # npm's first error line names the cause (ECONNREFUSED, SELF_SIGNED_CERT_IN_CHAIN, ...).
  set(why "exit code ${rc}")
  if(err MATCHES "npm ERR! ([^\n]+)\nnpm ERR! ([^\n]+)")
    set(why "${CMAKE_MATCH_1}: ${CMAKE_MATCH_2}")
  elseif(err MATCHES "npm ERR! ([^\n]+)")
    set(why "${CMAKE_MATCH_1}")
  endif()
  message("nestsim: the page of `nestsim view` is not built: npm ci failed (${why}); it "
          "needs the npm registry (or npm's cache) once: ${later}")
  return()
endif()

file(MAKE_DIRECTORY ${DIST_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env NODE_PATH=${NPM_DIR}/node_modules
          ${NPM_DIR}/node_modules/.bin/esbuild ${SOURCE_DIR}/src/main.js
          --bundle --minify --format=esm --target=es2020 --log-level=warning
          --outfile=${DIST_DIR}/app.js
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  # The sources are the project's own: a bundle that fails is a bug, not a missing tool.
  message(FATAL_ERROR "nestsim: esbuild could not bundle ${SOURCE_DIR}/src/main.js")
endif()
file(COPY ${SOURCE_DIR}/src/style.css DESTINATION ${DIST_DIR})
file(COPY ${SOURCE_DIR}/src/index.html DESTINATION ${DIST_DIR})
file(TOUCH ${DIST_DIR}/index.html)  # newer than the sources: the build is up to date
message(STATUS "nestsim: the page of `nestsim view` is built in ${DIST_DIR}")

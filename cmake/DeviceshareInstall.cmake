# The installable package (issue #18), included by the top-level
# CMakeLists.txt after every target is defined. `cmake --install build
# --prefix P` lays out:
#
#   P/include/deviceshare/...        public headers of lib/*/include (src/
#   P/include/gpu_abi/...            stays private) and the C API's
#   P/include/deviceshare/c/deviceshare.h
#   P/lib/libdeviceshare_*.a         core, hamicore, mig, mps, builtin (.so
#                                    with -DBUILD_SHARED_LIBS=ON)
#   P/lib/libdeviceshare_c.so        the C API (always shared)
#   P/lib/deviceshare/libvgpu.so     its own rule (lib/hamicore/vgpu)
#   P/lib/cmake/deviceshare/         find_package(deviceshare)
#   P/lib/pkgconfig/deviceshare.pc   the C API for pkg-config
#   P/bin/deviceshare-scheduler, deviceshare-node-agent
#   P/share/deviceshare/deploy/      the deploy kit (kubectl apply -k), less
#                                    images/, which builds from the source
#   P/share/deviceshare/examples/    the simulate/discover inputs (*.yaml,
#                                    modes/, dra/)
#
# Each rule names a component, so that an image installs only its own part
# (`cmake --install build --component scheduler`, deploy/images/):
#   scheduler               the scheduler executable
#   node-agent              the agent executable and libvgpu.so (its rule
#                           is in lib/hamicore/vgpu)
#   deploy, examples        the share/deviceshare folders
#   development             headers, libraries, CMake and pkg-config files
#
# The same deviceshare::* names exist in the build tree as ALIAS targets,
# so a project that adds this tree with add_subdirectory or FetchContent
# links the names an installed package offers.
include(CMakePackageConfigHelpers)

set(DEVICESHARE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/deviceshare)

# While the major version is 0 a minor release may break the API and ABI,
# so a request for 0.1 accepts only 0.1.x; from 1.0 on, the same major.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(DEVICESHARE_COMPATIBILITY SameMinorVersion)
  set(DEVICESHARE_SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
else()
  set(DEVICESHARE_COMPATIBILITY SameMajorVersion)
  set(DEVICESHARE_SOVERSION ${PROJECT_VERSION_MAJOR})
endif()

# ---- The C++ libraries -------------------------------------------------------
# target -> the name users link, deviceshare::<name>.
set(DEVICESHARE_EXPORTED_CXX
    deviceshare_gpu_abi:gpu_abi
    deviceshare_core:core
    deviceshare_hamicore:hamicore
    deviceshare_mig:mig
    deviceshare_mps:mps
    deviceshare_builtin:backends)
set(DEVICESHARE_CXX_TARGETS)
foreach(_ds_entry IN LISTS DEVICESHARE_EXPORTED_CXX)
  string(REPLACE ":" ";" _ds_entry "${_ds_entry}")
  list(GET _ds_entry 0 _ds_target)
  list(GET _ds_entry 1 _ds_name)
  set_target_properties(${_ds_target} PROPERTIES EXPORT_NAME ${_ds_name})
  add_library(deviceshare::${_ds_name} ALIAS ${_ds_target})
  list(APPEND DEVICESHARE_CXX_TARGETS ${_ds_target})
  get_target_property(_ds_type ${_ds_target} TYPE)
  if(NOT _ds_type STREQUAL "INTERFACE_LIBRARY")
    set_target_properties(${_ds_target} PROPERTIES
      VERSION ${PROJECT_VERSION} SOVERSION ${DEVICESHARE_SOVERSION})
  endif()
endforeach()

get_target_property(_ds_type deviceshare_core TYPE)
if(_ds_type STREQUAL "STATIC_LIBRARY")
  set(DEVICESHARE_STATIC_CXX TRUE)
else()
  set(DEVICESHARE_STATIC_CXX FALSE)
endif()

# Shared libraries find each other, and the executables find them, from
# where they are installed: the prefix may be anything at install time.
if(NOT DEVICESHARE_STATIC_CXX AND NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  file(RELATIVE_PATH DEVICESHARE_BIN_TO_LIB /${CMAKE_INSTALL_BINDIR}
       /${CMAKE_INSTALL_LIBDIR})
  set_target_properties(deviceshare_core deviceshare_hamicore deviceshare_mig
                        deviceshare_mps deviceshare_builtin
                        PROPERTIES INSTALL_RPATH "$ORIGIN")
  set_target_properties(deviceshare-scheduler deviceshare-node-agent
                        PROPERTIES INSTALL_RPATH "$ORIGIN/${DEVICESHARE_BIN_TO_LIB}")
endif()

install(TARGETS ${DEVICESHARE_CXX_TARGETS}
        EXPORT deviceshareTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT development
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Only include/: the headers under src/ are the libraries' own.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/lib/deviceshare/include/
                  ${PROJECT_SOURCE_DIR}/lib/gpu_abi/include/
                  ${PROJECT_SOURCE_DIR}/lib/hamicore/include/
                  ${PROJECT_SOURCE_DIR}/lib/mig/include/
                  ${PROJECT_SOURCE_DIR}/lib/mps/include/
                  ${PROJECT_SOURCE_DIR}/lib/builtin/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT development
        FILES_MATCHING PATTERN "*.h")
install(EXPORT deviceshareTargets
        NAMESPACE deviceshare::
        DESTINATION ${DEVICESHARE_INSTALL_CMAKEDIR}
        COMPONENT development)

# ---- The C API ---------------------------------------------------------------
# A separate export set, so that find_package(deviceshare COMPONENTS c)
# loads no C++ dependency when libdeviceshare_c.so contains the static
# C++ libraries.
if(TARGET deviceshare_c)
  set(DEVICESHARE_HAS_C TRUE)
  set_target_properties(deviceshare_c PROPERTIES EXPORT_NAME c)
  add_library(deviceshare::c ALIAS deviceshare_c)
  if(NOT DEVICESHARE_STATIC_CXX)
    set_target_properties(deviceshare_c PROPERTIES INSTALL_RPATH "$ORIGIN")
  endif()
  install(TARGETS deviceshare_c
          EXPORT deviceshareCTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
          RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT development
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(FILES
          ${PROJECT_SOURCE_DIR}/plugins/capi/include/deviceshare/c/deviceshare.h
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/deviceshare/c
          COMPONENT development)
  install(EXPORT deviceshareCTargets
          NAMESPACE deviceshare::
          DESTINATION ${DEVICESHARE_INSTALL_CMAKEDIR}
          COMPONENT development)

  # pkg-config: its prefix is relative to the .pc file (${pcfiledir}), as
  # the CMake package's is to its own file, because `cmake --install
  # --prefix` chooses the prefix after this file is written.
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(DEVICESHARE_PC_RELATIVE_PREFIX "${CMAKE_INSTALL_PREFIX}")
    message(WARNING "An absolute CMAKE_INSTALL_LIBDIR makes deviceshare.pc "
                    "name the configured prefix, whatever --prefix says")
  else()
    file(RELATIVE_PATH DEVICESHARE_PC_RELATIVE_PREFIX
         /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
    string(REGEX REPLACE "/$" "" DEVICESHARE_PC_RELATIVE_PREFIX
           "${DEVICESHARE_PC_RELATIVE_PREFIX}")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/deviceshare.pc.in
                 ${PROJECT_BINARY_DIR}/package/deviceshare.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/deviceshare.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
          COMPONENT development)
else()
  set(DEVICESHARE_HAS_C FALSE)
endif()

# ---- find_package(deviceshare) -----------------------------------------------
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/deviceshareConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/deviceshareConfig.cmake
  INSTALL_DESTINATION ${DEVICESHARE_INSTALL_CMAKEDIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/package/deviceshareConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${DEVICESHARE_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/package/deviceshareConfig.cmake
              ${PROJECT_BINARY_DIR}/package/deviceshareConfigVersion.cmake
        DESTINATION ${DEVICESHARE_INSTALL_CMAKEDIR}
        COMPONENT development)

# ---- The executables ---------------------------------------------------------
install(TARGETS deviceshare-scheduler
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT scheduler)
install(TARGETS deviceshare-node-agent
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT node-agent)

# ---- The deploy kit and the examples -----------------------------------------
# The manifests as they are in the source (kubectl apply -k
# P/share/deviceshare/deploy); images/ is left out: its Dockerfiles build
# from a source tree, not from an installed one.
set(DEVICESHARE_INSTALL_SHAREDIR ${CMAKE_INSTALL_DATADIR}/deviceshare)
# Source permissions: certs.sh stays executable.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/deploy/
        DESTINATION ${DEVICESHARE_INSTALL_SHAREDIR}/deploy
        COMPONENT deploy
        USE_SOURCE_PERMISSIONS
        PATTERN images EXCLUDE)
# What the executables read: simulate's clusters, workloads and configs
# (the folders hold the mode and DRA examples), discover's inventory. The
# C and C++ programs stay in the source: they build against an install.
file(GLOB DEVICESHARE_EXAMPLE_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/examples/*.yaml)
install(FILES ${DEVICESHARE_EXAMPLE_FILES}
        DESTINATION ${DEVICESHARE_INSTALL_SHAREDIR}/examples
        COMPONENT examples)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/modes
                  ${PROJECT_SOURCE_DIR}/examples/dra
        DESTINATION ${DEVICESHARE_INSTALL_SHAREDIR}/examples
        COMPONENT examples)

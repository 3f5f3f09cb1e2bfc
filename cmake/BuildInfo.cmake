# Generates build_info.cpp on every build so that `fabgate --version` names the commit the
# binary was really built from, not the one that was current when CMake last configured.
set(FABGATE_BUILD_INFO_CPP ${CMAKE_BINARY_DIR}/generated/build_info.cpp)
add_custom_target(fabgate_build_info_gen
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${FABGATE_BUILD_INFO_CPP}
          -DVERSION=${PROJECT_VERSION}
          -P ${CMAKE_SOURCE_DIR}/cmake/WriteBuildInfo.cmake
  BYPRODUCTS ${FABGATE_BUILD_INFO_CPP}
  COMMENT "Recording build commit")
